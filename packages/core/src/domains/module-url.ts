/**
 * The module URL a definition (a task, events, a portable, an error class)
 * is registered under: another domain imports that module to find it again,
 * so it must be a URL, which a CommonJS module has to make from its path.
 */
import { describe } from "../describe.js";

/** @internal Throws unless `url` looks like a module's URL; `signature` is the caller's, as the user wrote it. */
export function checkModuleUrl(url: unknown, signature: string): void {
  if (typeof url === "string" && /^[a-z][a-z0-9+.-]*:/i.test(url)) return;
  throw new TypeError(
    `${signature} expects the defining module's import.meta.url as url ` +
      `(in a CommonJS module: require("node:url").pathToFileURL(__filename).href), got ${describe(url)}`,
  );
}
