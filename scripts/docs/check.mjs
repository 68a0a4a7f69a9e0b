// The rule `pnpm docs` holds the public API to: every export of every entry point has a
// summary and an `@example`, and every exported function says what it throws (`@throws`, which
// may say that it throws nothing). Class and interface members are the class's to document;
// a namespace's members are exports of their own.
import { ReflectionKind } from "typedoc";

/** The comments that document a reflection: its own, its signatures', its accessor's. */
function commentsOf(reflection) {
  const comments = [reflection.comment];
  for (const signature of reflection.signatures ?? []) comments.push(signature.comment);
  comments.push(reflection.getSignature?.comment, reflection.setSignature?.comment);
  return comments.filter((c) => c !== undefined);
}

const hasSummary = (comment) => comment.summary.some((part) => part.text.trim() !== "");
const hasExample = (comment) => comment.blockTags.some((tag) => tag.tag === "@example");
const hasThrows = (comment) => comment.blockTags.some((tag) => tag.tag === "@throws");

/**
 * What each entry point's exports lack.
 * @param {import("typedoc").ProjectReflection} project
 * @returns {string[]} one line per export that lacks something, e.g. `@bobbin/core: run — no @example`
 */
export function undocumentedExports(project) {
  const problems = [];
  const visit = (module, reflection, path) => {
    for (const child of reflection.children ?? []) {
      if (child.kindOf(ReflectionKind.Reference)) continue; // a re-export: documented where it is declared
      const name = [...path, child.name].join(".");
      const comments = commentsOf(child);
      const lacks = [];
      if (!comments.some(hasSummary)) lacks.push("summary");
      if (!comments.some(hasExample)) lacks.push("@example");
      if (child.kindOf(ReflectionKind.Function) && !comments.some(hasThrows)) lacks.push("@throws");
      if (lacks.length > 0) problems.push(`${module}: ${name} — no ${lacks.join(", no ")}`);
      if (child.kindOf(ReflectionKind.Namespace)) visit(module, child, [...path, child.name]);
    }
  };
  // With several entry points the project's children are their modules; with one, the project is it.
  const children = project.children ?? [];
  const modules = children.length > 0 && children.every((c) => c.kindOf(ReflectionKind.Module)) ? children : [project];
  for (const module of modules) visit(module.name, module, []);
  return problems;
}
