/** What a dump of a run (`B.dump()`) says its tasks wait on. */

/** The part of `@bobbin/core`'s `Dump` read here. */
export interface DumpedTasks {
  readonly tasks: readonly { readonly children: readonly { readonly name: string; readonly waitsOn: string | null }[] }[];
}

/**
 * The `waitsOn` of each task below the root, by name.
 * @example
 * ```ts
 * expect(waitsOf(B.dump())).toEqual({ reader: "read tcp4 127.0.0.1:3000" });
 * ```
 */
export function waitsOf(dump: DumpedTasks): Record<string, string | null> {
  return Object.fromEntries(dump.tasks[0]!.children.map((t) => [t.name, t.waitsOn]));
}
