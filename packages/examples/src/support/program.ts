/**
 * The start every socket program shares: its options, its backend (printed
 * on its first line), and for chapter 6's single-domain servers the whole run.
 */
import type * as B from "@bobbin/core";
import { type Address, run } from "@bobbin/unix";
import { formatAddress } from "./address.js";
import { type ChosenBackend, chooseBackend } from "./backend.js";
import { type ServerArgs, serverArgs } from "./cli.js";

/** A server program's options and backend. */
export interface ServerProgram extends ServerArgs {
  readonly backend: ChosenBackend;
}

/**
 * Parses the options (see `serverArgs`), chooses the backend and prints
 * `backend: <name> (<why>)`.
 *
 * @example
 * ```ts
 * const { host, port, backend } = await serverProgram({ domains: { type: "string", default: "auto" } });
 * ```
 */
export async function serverProgram(extra: Parameters<typeof serverArgs>[0] = {}): Promise<ServerProgram> {
  const args = serverArgs(extra);
  const backend = await chooseBackend();
  console.log(`backend: ${backend.name} (${backend.reason})`);
  return { ...args, backend };
}

/**
 * `--domains auto|n`: how many worker domains serve beside dom0 (`auto`: one
 * per core but one, the book's `recommended_domain_count () - 1`).
 *
 * @example
 * ```ts
 * domainsArg("auto", 1);   // 1 on a machine of 2 cores
 * ```
 * @throws RangeError for anything but auto or an integer ≥ 0.
 */
export function domainsArg(value: unknown, auto: number): number {
  if (value === "auto") return auto;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new RangeError(`--domains must be auto or an integer ≥ 0, got ${String(value)}`);
  return n;
}

/** A chapter 6 server on dom0: listens on `addr`, calls `onListening`, serves until killed. */
export type EchoServer = (addr: Address, onListening: (address: Address) => void) => Generator<B.Instruction, unknown, unknown>;

/**
 * The whole of a single-domain echo program: options, backend, then
 * `server` on `--host`/`--port` until the process is killed.
 *
 * @example
 * ```ts
 * await runEchoServer(server);   // prints "echo server on 127.0.0.1:3000"
 * ```
 */
export async function runEchoServer(server: EchoServer): Promise<void> {
  const { host, port, backend } = await serverProgram();
  await run(
    function* () {
      yield* server({ host, port }, (address) => console.log(`echo server on ${formatAddress(address)}`));
    },
    { backend: backend.factory },
  );
}
