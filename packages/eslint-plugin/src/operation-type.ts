/**
 * Telling a Bobbin operation by its type.
 *
 * An operation is anything whose `[Symbol.iterator]()` returns an iterator of
 * `@bobbin/core`'s `Instruction`s: core's `Operation<T>` interface, a
 * generator of instructions (`Generator<Instruction, T>`), and every class
 * that implements the protocol (core's `Trigger` and `Syscall`, unix's
 * `Parked`, a user's own). `Instruction` is recognised by its brand, a
 * property keyed by core's `instructionBrand` unique symbol, so whichever copy
 * of `@bobbin/core` the program sees (its published declarations or its
 * sources) is recognised, and nothing depends on a function's name.
 */
import type * as ts from "typescript";

/** TypeScript's internal name of a property keyed by the unique symbol `name`: `__@name@<id>`. */
function isSymbolKeyed(property: ts.Symbol, name: string): boolean {
  return String(property.escapedName).startsWith(`__@${name}@`);
}

function members(type: ts.Type): readonly ts.Type[] {
  return type.isUnion() ? type.types : [type];
}

/** Whether `type` is core's `Instruction`, or a union that includes it. */
function isInstruction(type: ts.Type): boolean {
  return members(type).some((member) => member.getProperties().some((property) => isSymbolKeyed(property, "instructionBrand")));
}

/** The return types of the call signatures of a method (none when there is no such method). */
function returnTypesOf(checker: ts.TypeChecker, method: ts.Symbol | undefined, at: ts.Node): ts.Type[] {
  if (method === undefined) return [];
  return checker
    .getTypeOfSymbolAtLocation(method, at)
    .getCallSignatures()
    .map((signature) => checker.getApparentType(signature.getReturnType()));
}

/** Whether `iterator.next()` can produce an `Instruction` as its value. */
function yieldsInstructions(checker: ts.TypeChecker, iterator: ts.Type, at: ts.Node): boolean {
  return returnTypesOf(checker, iterator.getProperty("next"), at).some((result) =>
    members(result).some((step) => {
      const value = step.getProperty("value");
      return value !== undefined && isInstruction(checker.getTypeOfSymbolAtLocation(value, at));
    }),
  );
}

/** Whether one member of a union (or a type that is not one) is an iterable of instructions. */
function isOperationMember(checker: ts.TypeChecker, member: ts.Type, at: ts.Node): boolean {
  const apparent = checker.getApparentType(member);
  const iterate = apparent.getProperties().find((property) => isSymbolKeyed(property, "iterator"));
  return returnTypesOf(checker, iterate, at).some((iterator) => yieldsInstructions(checker, iterator, at));
}

/**
 * How much of a value of `type` is a Bobbin operation (an iterable whose
 * iterator yields core's `Instruction`s): `"all"`, `"some"` (a union such as
 * `false | Operation<void>`), or `"none"`. `at` is the node the value comes
 * from (it resolves `this` types and generics there).
 */
export function operationShare(checker: ts.TypeChecker, type: ts.Type, at: ts.Node): "all" | "some" | "none" {
  const operations = members(type).filter((member) => isOperationMember(checker, member, at)).length;
  if (operations === 0) return "none";
  return operations === members(type).length ? "all" : "some";
}
