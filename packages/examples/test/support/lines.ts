/**
 * A line-oriented test client on loopback (a chat client): keeps every line
 * it received, waits for lines with time limits.
 */
import { StringDecoder } from "node:string_decoder";
import { connected, TestConnection } from "./net.js";

/** A TCP client that splits what it receives into lines. */
export class LineClient extends TestConnection {
  /** Every complete line received, without its newline. */
  readonly lines: string[] = [];
  private readonly decoder = new StringDecoder("utf8");
  private partial = "";

  protected receive(chunk: Buffer): void {
    const parts = (this.partial + this.decoder.write(chunk)).split("\n");
    this.partial = parts.pop()!;
    for (const line of parts) this.lines.push(line);
  }

  /** Connects to `127.0.0.1:port`. */
  static async connect(port: number): Promise<LineClient> {
    return new LineClient(await connected(port));
  }

  /** Sends `text` as it is (add the newlines). */
  send(text: string): void {
    this.socket.write(text);
  }

  /**
   * Waits until a line received satisfies `predicate` (lines already received
   * count) and returns it; rejects after `ms`, or when the connection closes
   * first, with the lines received.
   */
  waitForLine(predicate: (line: string) => boolean, ms = 10_000): Promise<string> {
    let next = 0;
    return this.until(() => {
      for (; next < this.lines.length; next++) if (predicate(this.lines[next]!)) return this.lines[next]!;
      return undefined;
    }, ms);
  }

  /** Waits until the connection is closed; rejects after `ms`. */
  waitForClose(ms = 10_000): Promise<true> {
    return this.until(() => (this.ended ? true : undefined), ms, true);
  }

  private until<T>(found: () => T | undefined, ms: number, closeIsAnswer = false): Promise<T> {
    return new Promise((resolve, reject) => {
      const fail = (why: string): void => {
        const tail = this.lines.slice(-5).map((l) => (l.length > 80 ? `${l.slice(0, 80)}…` : l));
        reject(new Error(`${why}; ${this.lines.length} line(s) received, the last: ${JSON.stringify(tail)}`));
      };
      const timer = setTimeout(() => fail(`timed out after ${ms} ms`), ms);
      const check = (): void => {
        const value = found();
        if (value !== undefined) {
          clearTimeout(timer);
          resolve(value);
        } else if (this.ended && !closeIsAnswer) {
          clearTimeout(timer);
          fail("the connection closed");
        } else this.onChange(check);
      };
      check();
    });
  }
}
