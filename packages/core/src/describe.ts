/**
 * @internal A value in a few words, for error messages: `null`, `function
 * name`, a class name, a quoted string, or the primitive itself.
 */
export function describe(value: unknown): string {
  if (value === null) return "null";
  if (value === undefined) return "undefined";
  if (typeof value === "function") return `function ${value.name || "(anonymous)"}`;
  if (typeof value === "object") {
    const name = (value as object).constructor?.name;
    if (Array.isArray(value)) return `an array of ${value.length}`;
    return name === undefined || name === "Object" ? "an object" : `a ${name}`;
  }
  if (typeof value === "string") return JSON.stringify(value);
  if (typeof value === "symbol") return value.toString();
  return `${typeof value} ${String(value)}`;
}
