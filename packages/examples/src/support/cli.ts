/**
 * Command-line options shared by the example programs.
 */
import { parseArgs } from "node:util";

/** What every server example accepts: `--host`, `--port`, and positionals. */
export interface ServerArgs {
  readonly host: string;
  readonly port: number;
  readonly positionals: string[];
  readonly values: Record<string, string | boolean | undefined>;
}

/**
 * Parses `--host` (default 127.0.0.1) and `--port` (default 3000, the book's),
 * plus the `extra` string options of a program.
 *
 * @example
 * ```ts
 * const { host, port } = serverArgs();
 * ```
 * @throws TypeError for an unknown option or a port that is not 0..65535.
 */
export function serverArgs(extra: Record<string, { type: "string" | "boolean"; default?: string | boolean }> = {}): ServerArgs {
  const { values, positionals } = parseArgs({
    options: { host: { type: "string", default: "127.0.0.1" }, port: { type: "string", default: "3000" }, ...extra },
    allowPositionals: true,
  });
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new TypeError(`--port must be an integer 0..65535, got ${values.port}`);
  return { host: values.host as string, port, positionals, values: values as Record<string, string | boolean | undefined> };
}
