/**
 * The request a handler gets: Node's `IncomingMessage`, with its body read
 * by operations (`bytes`, `text`, `json`, and `chunk` at a time, with
 * back-pressure: the connection is read only as fast as the handler takes).
 */
import * as http from "node:http";
import type * as B from "@bobbin/core";
import { fromStream, read, type Socket } from "@bobbin/unix";
import { HttpError } from "./errors.js";
import { stateOf } from "./server-state.js";

/** How much one `chunk()` takes at most. */
const CHUNK_SIZE = 64 * 1024;

/** The default of `serve`'s `bodyLimit`: 1 MiB. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/**
 * The request a handler of `serve` gets: Node's `http.IncomingMessage`
 * (`method`, `url`, `headers`, `socket`…), with operations that read its
 * body. A body is read once: by these operations, or as a Node stream, not
 * both.
 *
 * @example
 * ```ts
 * yield* serve({ port: 8080 }, function* (req, res) {
 *   const item = yield* req.json<{ name: string }>();
 *   yield* res.send({ hello: item.name });
 * });
 * ```
 * @throws from its operations only (see each): `HttpError` 400 and 413, the connection's errors, `Cancelled`.
 */
export class Request extends http.IncomingMessage {
  /** The body as a socket (`fromStream`), once a body operation ran. */
  private bodySocket: Socket | null = null;
  private scratch: Buffer | null = null;

  /**
   * The next piece of the body, or `null` at its end. The connection is read
   * only as fast as the chunks are taken (back-pressure for the client).
   *
   * @example
   * ```ts
   * let size = 0;
   * for (let c = yield* req.chunk(); c !== null; c = yield* req.chunk()) size += c.length;
   * ```
   * @throws the connection's error (`ECONNRESET` "aborted" when the client leaves mid-body).
   * @throws Cancelled when the handler is cancelled while it waits.
   */
  *chunk(): Generator<B.Instruction, Buffer | null, unknown> {
    this.bodySocket ??= fromStream(this);
    this.scratch ??= Buffer.allocUnsafe(CHUNK_SIZE);
    const n = yield* read(this.bodySocket, this.scratch);
    return n === 0 ? null : Buffer.from(this.scratch.subarray(0, n));
  }

  /**
   * The whole body, as bytes. A body larger than the server's `bodyLimit`
   * (default 1 MiB) is refused with a 413, before it is read when its
   * `content-length` says so.
   *
   * @example
   * ```ts
   * const upload = yield* req.bytes();
   * ```
   * @throws HttpError 413 for a body over the limit.
   * @throws the connection's error; Cancelled when the handler is cancelled while it waits.
   */
  *bytes(): Generator<B.Instruction, Buffer, unknown> {
    const limit = stateOf(this.socket)?.bodyLimit ?? DEFAULT_BODY_LIMIT;
    const declared = Number(this.headers["content-length"]);
    if (declared > limit) throw tooLarge(limit);
    const chunks: Buffer[] = [];
    let size = 0;
    for (let c = yield* this.chunk(); c !== null; c = yield* this.chunk()) {
      size += c.length;
      if (size > limit) throw tooLarge(limit);
      chunks.push(c);
    }
    return Buffer.concat(chunks, size);
  }

  /**
   * The whole body, as UTF-8 text (see {@link Request.bytes}).
   *
   * @example
   * ```ts
   * const note = yield* req.text();
   * ```
   * @throws as {@link Request.bytes}.
   */
  *text(): Generator<B.Instruction, string, unknown> {
    return (yield* this.bytes()).toString("utf8");
  }

  /**
   * The whole body, parsed as JSON (see {@link Request.bytes}). The type
   * parameter is a claim about the body, not a check: validate what matters.
   *
   * @example
   * ```ts
   * const { name } = yield* req.json<{ name: string }>();
   * ```
   * @throws HttpError 400 when the body is not JSON; as {@link Request.bytes}.
   */
  *json<T = unknown>(): Generator<B.Instruction, T, unknown> {
    const text = yield* this.text();
    try {
      return JSON.parse(text) as T;
    } catch (error) {
      throw new HttpError(400, `the request's body is not JSON: ${(error as Error).message}`, { cause: error });
    }
  }
}

function tooLarge(limit: number): HttpError {
  return new HttpError(413, `the request's body is larger than ${limit} bytes, the server's limit`, { headers: { connection: "close" } });
}
