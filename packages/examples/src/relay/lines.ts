/**
 * Reading a socket line by line, as a chat client types them.
 */
import type * as B from "@bobbin/core";
import { read, type Socket } from "@bobbin/unix";

const NEWLINE = 0x0a;
const EMPTY = Buffer.alloc(0);

/** A line longer than the reader takes: the client is not speaking the relay's protocol. */
export class LineTooLong extends Error {
  override readonly name = "LineTooLong";

  constructor(readonly limit: number) {
    super(`a line is at most ${limit} bytes long: send shorter lines, each ended by a newline`);
  }
}

/**
 * The lines a client sends on `sock`: split on `"\n"` (a `"\r"` before it is
 * dropped, for telnet), decoded as UTF-8. Only a complete line is a line:
 * bytes after the last newline when the stream ends (or the connection is
 * reset) are dropped.
 *
 * @example
 * ```ts
 * const lines = new LineReader(client, 4096);
 * for (let line = yield* lines.next(); line !== null; line = yield* lines.next()) console.log(line);
 * ```
 */
export class LineReader {
  /** Bytes read and not yet returned as a line. */
  private pending: Buffer = EMPTY;
  private readonly chunk = Buffer.alloc(4096);

  /**
   * @throws RangeError when `limit` is not an integer ≥ 1.
   */
  constructor(
    private readonly sock: Socket,
    /** The longest line taken, in bytes, its newline not counted. */
    readonly limit: number,
  ) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`LineReader(sock, limit): limit must be an integer ≥ 1, got ${limit}`);
  }

  /**
   * The next line, without its newline; `null` at the end of the stream.
   *
   * @example
   * ```ts
   * const line = yield* lines.next();
   * ```
   * @throws LineTooLong when more than `limit` bytes come without a newline.
   * @throws the errors of `read` (`ECONNRESET`…).
   */
  *next(): Generator<B.Instruction, string | null, unknown> {
    for (;;) {
      const end = this.pending.indexOf(NEWLINE);
      if (end >= 0) {
        const line = this.pending.subarray(0, end > 0 && this.pending[end - 1] === 0x0d ? end - 1 : end);
        this.pending = this.pending.subarray(end + 1);
        if (line.length > this.limit) throw new LineTooLong(this.limit);
        return line.toString("utf8");
      }
      if (this.pending.length > this.limit + 1) throw new LineTooLong(this.limit); // its "\r" may come next
      const n = yield* read(this.sock, this.chunk);
      if (n === 0) return null;
      this.pending = Buffer.concat([this.pending, this.chunk.subarray(0, n)]);
    }
  }
}
