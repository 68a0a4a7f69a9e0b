/**
 * Error classes that keep their class across domains. An error crosses as
 * its name, message, stack, own properties and cause (see wire.ts); the
 * receiving domain rebuilds it as an instance of the same class when it
 * knows the class: Bobbin's own and JavaScript's built-in classes always,
 * other classes once registered with {@link defineError}.
 */
import { describe } from "../describe.js";
import { definitionAdded } from "./loading.js";
import { checkModuleUrl } from "./module-url.js";

type ErrorClass = abstract new (...args: never[]) => Error;

interface Registered {
  readonly key: string;
  readonly module: string;
}

const classes = new Map<string, ErrorClass>();
const keys = new Map<ErrorClass, Registered>();

/**
 * Registers an error class so that its instances keep their class when a
 * parallel task throws them (or they are the `cause` of what it throws): the
 * receiving domain rebuilds the error with the class's prototype (its
 * constructor does not run), then sets its message, stack, own properties
 * and cause. Call it at the top level of the module that defines the class,
 * with that module's `import.meta.url`: a domain that receives such an error
 * without having loaded the module imports it by itself. An error of a class
 * that is not registered arrives as a plain `Error` whose `name` is the
 * class's name, with the same message, stack and own (cloneable) properties:
 * `instanceof` is false for it, `error.name` still tells.
 *
 * @example
 * ```ts
 * export class QuotaExceeded extends Error {
 *   constructor(readonly limit: number) { super(`over ${limit}`); }
 * }
 * B.defineError(import.meta.url, QuotaExceeded);
 * // in the caller: (yield* B.awaitTask(B.call(upload, file))).error instanceof QuotaExceeded   // true
 * ```
 * @throws TypeError when `url` is not a module URL, when `errorClass` is not
 * a named subclass of `Error`, or when another class of the same name is
 * registered for this module.
 */
export function defineError(url: string, errorClass: ErrorClass): void {
  checkModuleUrl(url, "defineError(url, errorClass)");
  if (typeof errorClass !== "function" || !(errorClass.prototype instanceof Error)) {
    throw new TypeError(`defineError(url, errorClass) expects a class that extends Error, got ${describe(errorClass)}`);
  }
  if (errorClass.name === "")
    throw new TypeError("defineError(url, errorClass) expects a named class: its name identifies it in other domains");
  const key = `${url}#${errorClass.name}`;
  const known = classes.get(key);
  if (known === errorClass) return;
  if (known !== undefined)
    throw new TypeError(`defineError: ${url} registers two classes named ${errorClass.name}; give each its own name`);
  classes.set(key, errorClass);
  keys.set(errorClass, { key, module: url });
  definitionAdded();
}

/** @internal How the class of `error` is known to other domains, if it was registered. */
export function registeredClassOf(error: Error): Registered | null {
  return keys.get(error.constructor as ErrorClass) ?? null;
}

/** @internal The registered class of `key` in this domain, if its module was loaded here. */
export function registeredClass(key: string): ErrorClass | undefined {
  return classes.get(key);
}
