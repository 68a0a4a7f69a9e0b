/** The names a declaration file uses, for the tests that check what a published declaration may name. */
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
