/** The names a declaration file uses, for the tests that check what a published declaration may name. */
import { existsSync, readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import ts from "typescript";

/** The identifiers of a declaration file, comments left out. */
export function identifiers(text: string): Set<string> {
  const scanner = ts.createScanner(ts.ScriptTarget.Latest, true, ts.LanguageVariant.Standard, text);
  const names = new Set<string>();
  for (let token = scanner.scan(); token !== ts.SyntaxKind.EndOfFileToken; token = scanner.scan()) {
    if (token === ts.SyntaxKind.Identifier) names.add(scanner.getTokenValue());
  }
  return names;
}

/**
 * The names a declaration file declares, imports, exports or refers to,
 * comments left out — but not the names of members and parameters, which are
 * words of their own object (a task's `uid`, run's `signal` option) rather
 * than references to a declaration.
 */
export function references(text: string): Set<string> {
  const source = ts.createSourceFile("entry.d.ts", text, ts.ScriptTarget.Latest, true);
  const names = new Set<string>();
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) && !isOwnWord(node)) names.add(node.text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return names;
}

function isOwnWord(node: ts.Identifier): boolean {
  const parent = node.parent;
  const named =
    ts.isPropertySignature(parent) ||
    ts.isPropertyDeclaration(parent) ||
    ts.isMethodSignature(parent) ||
    ts.isMethodDeclaration(parent) ||
    ts.isGetAccessorDeclaration(parent) ||
    ts.isSetAccessorDeclaration(parent) ||
    ts.isParameter(parent) ||
    ts.isPropertyAssignment(parent) ||
    ts.isEnumMember(parent);
  return named && parent.name === node;
}

/** `file` and every declaration file it imports by a relative path (the bundler's chunks), transitively. */
export function closure(file: string, seen = new Set<string>()): Set<string> {
  if (seen.has(file)) return seen;
  seen.add(file);
  const text = readFileSync(file, "utf8");
  for (const [, specifier] of text.matchAll(/from\s+['"](\.{1,2}\/[^'"]+)['"]/g)) {
    const target = resolve(dirname(file), specifier!.replace(/\.js$/, ".d.ts"));
    if (existsSync(target)) closure(target, seen);
  }
  return seen;
}
