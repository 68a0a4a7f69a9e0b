/**
 * The response a handler writes: Node's `ServerResponse`, with `send`, an
 * operation that ends it and returns once it was sent.
 */

import * as http from "node:http";
import * as B from "@bobbin/core";
import { describe } from "@bobbin/core/lowlevel";
import { systemError } from "@bobbin/unix/backend";
import { stateOf } from "./server-state.js";

/**
 * Options of {@link Response.send}.
 *
 * @example
 * ```ts
 * yield* res.send("created", { status: 201, headers: { location: "/items/7" } });
 * ```
 */
export interface SendOptions {
  /** The status code (default: `res.statusCode`, 200 unless set). */
  readonly status?: number | undefined;
  /** Headers to set before sending (they win over those set before). */
  readonly headers?: http.OutgoingHttpHeaders | undefined;
}

/**
 * The response a handler of `serve` gets: Node's `http.ServerResponse`
 * (`setHeader`, `writeHead`, `write`, `end`…), with {@link Response.send}.
 *
 * @example
 * ```ts
 * yield* serve({ port: 8080 }, function* (req, res) {
 *   yield* res.send({ path: req.url });
 * });
 * ```
 * @throws from `send` only (see it).
 */
export class Response extends http.ServerResponse<http.IncomingMessage> {
  /**
   * Ends the response with `body` and returns once it was handed to the
   * connection (a slow client holds the handler here: back-pressure). A
   * string is sent as UTF-8 text (`text/plain`), bytes as they are
   * (`application/octet-stream`), anything else as JSON (`application/json`),
   * unless a `content-type` was set; no body (or `null`) sends none.
   * `content-length` is set when the headers were not sent yet.
   *
   * @example
   * ```ts
   * yield* res.send({ id: 7 }, { status: 201 });
   * yield* res.send();                       // 200, no body
   * ```
   * @throws TypeError when the response was ended already, or for bad options; RangeError for a bad status.
   * @throws Error with code `ECONNRESET` when the client closed the connection before the response was sent.
   * @throws Cancelled when the handler is cancelled while it waits.
   */
  *send(body?: unknown, options: SendOptions = {}): Generator<B.Instruction, void, unknown> {
    if (this.writableEnded) throw new TypeError("res.send(): the response has ended already: send (or end) a response once");
    if (options === null || typeof options !== "object")
      throw new TypeError(`res.send(body, options) expects options { status, headers }, got ${describe(options)}`);
    const { status, headers } = options;
    if (!this.headersSent) {
      if (status !== undefined) {
        if (!Number.isInteger(status) || status < 100 || status > 999)
          throw new RangeError(`res.send(): status must be an integer from 100 to 999, got ${describe(status)}`);
        this.statusCode = status;
      }
      if (headers !== undefined) for (const [name, value] of Object.entries(headers)) if (value !== undefined) this.setHeader(name, value);
    }
    const encoded = this.encode(body);
    if (encoded !== null && !this.headersSent)
      this.setHeader("content-length", typeof encoded === "string" ? Buffer.byteLength(encoded, "utf8") : encoded.length);
    if (this.destroyed) throw clientLeft();
    this.end(encoded ?? undefined);
    // Handed to the connection at once (the usual case: the system took it all), or wait for it.
    if (this.writableFinished) return;
    yield* B.once(this, "close");
    if (!this.writableFinished) throw clientLeft();
  }

  /** While its server stops, a response closes its connection once sent (`connection: close`). */
  override writeHead(statusCode: number, statusMessage?: string, headers?: http.OutgoingHttpHeaders | http.OutgoingHttpHeader[]): this;
  override writeHead(statusCode: number, headers?: http.OutgoingHttpHeaders | http.OutgoingHttpHeader[]): this;
  override writeHead(statusCode: number, ...rest: unknown[]): this {
    if (stateOf(this.socket)?.stopping === true) this.shouldKeepAlive = false;
    return super.writeHead(statusCode, ...(rest as [string])) as this;
  }

  /**
   * `body` as bytes or as text (which `end` writes in UTF-8, after the head
   * in the same string: one chunk for the connection), with its content type
   * set unless one is.
   */
  private encode(body: unknown): Uint8Array | string | null {
    if (body === undefined || body === null) return null;
    const typed = this.headersSent || this.hasHeader("content-type");
    if (typeof body === "string") {
      if (!typed) this.setHeader("content-type", "text/plain; charset=utf-8");
      return body;
    }
    if (body instanceof Uint8Array) {
      if (!typed) this.setHeader("content-type", "application/octet-stream");
      return body;
    }
    if (!typed) this.setHeader("content-type", "application/json; charset=utf-8");
    return JSON.stringify(body);
  }
}

/** The errors `send` threw because the client had left: the server treats them as the client leaving, not as a handler's bug. */
const leftErrors = new WeakSet<object>();

function clientLeft(): NodeJS.ErrnoException {
  const error = systemError("ECONNRESET", "send", "the client closed the connection before the response was sent");
  leftErrors.add(error);
  return error;
}

/** @internal Whether `error` is `send`'s, thrown because the client had left. */
export function isClientLeft(error: unknown): boolean {
  return typeof error === "object" && error !== null && leftErrors.has(error);
}
