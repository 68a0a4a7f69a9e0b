/**
 * `no-floating-operation`: an operation created by a statement and never run.
 *
 * A Bobbin operation does nothing until a task consumes it with `yield*`, so
 * `U.write(c, "hi");` without it writes nothing, silently, and TypeScript
 * cannot tell: the value is simply dropped. The rule looks at the type of
 * every expression statement; storing, passing or returning an operation are
 * not statements of that kind, and `void op;` discards one on purpose.
 */
import { AST_NODE_TYPES, ESLintUtils, type TSESTree } from "@typescript-eslint/utils";
import { operationShare } from "../operation-type.js";

type MessageId = "floating" | "floatingOutsideGenerator" | "runIt";

/** How much of the statement's source a message quotes. */
const QUOTED_LENGTH = 40;

function quote(text: string): string {
  const oneLine = text.replace(/\s+/g, " ");
  return oneLine.length <= QUOTED_LENGTH ? oneLine : `${oneLine.slice(0, QUOTED_LENGTH - 1)}…`;
}

/** Whether `yield*` may be written at `node`: its nearest function is a generator function. */
function inGenerator(node: TSESTree.Node): boolean {
  for (let at = node.parent; at; at = at.parent) {
    switch (at.type) {
      case AST_NODE_TYPES.FunctionDeclaration:
      case AST_NODE_TYPES.FunctionExpression:
        return at.generator;
      case AST_NODE_TYPES.ArrowFunctionExpression:
      case AST_NODE_TYPES.StaticBlock:
      case AST_NODE_TYPES.PropertyDefinition:
        return false;
    }
  }
  return false;
}

/**
 * The rule module. Needs type information (typescript-eslint's parser with
 * `parserOptions.projectService` or `project`).
 *
 * @example
 * ```ts
 * // eslint.config.js
 * import bobbin from "@bobbin/eslint-plugin";
 * export default [{ plugins: { "@bobbin": bobbin }, rules: { "@bobbin/no-floating-operation": "error" } }];
 * ```
 * @throws Error (from ESLint, when linting) if the file is parsed without type information.
 */
export const noFloatingOperation = ESLintUtils.RuleCreator.withoutDocs<[], MessageId>({
  meta: {
    type: "problem",
    docs: { description: "Require every Bobbin operation created by a statement to be run with `yield*`" },
    hasSuggestions: true,
    schema: [],
    messages: {
      floating:
        "This operation is created and never run: it does nothing until a task consumes it. " +
        "Write `yield* {{code}}` to run it, or `void {{code}}` to discard it on purpose.",
      floatingOutsideGenerator:
        "This operation is created and never run: it does nothing until a task consumes it with `yield*` inside a generator function. " +
        "Run it from a task's body (`yield* {{code}}`), return it or pass it on, or write `void {{code}}` to discard it on purpose.",
      runIt: "Run it: `yield* {{code}}`.",
    },
  },
  defaultOptions: [],
  create(context) {
    const services = ESLintUtils.getParserServices(context);
    const checker = services.program.getTypeChecker();
    return {
      ExpressionStatement(statement) {
        const expression = statement.expression;
        // `op = U.sleep(1)` stores the operation; its type is the operation's all the same.
        if (expression.type === AST_NODE_TYPES.AssignmentExpression) return;
        const share = operationShare(checker, services.getTypeAtLocation(expression), services.esTreeNodeToTSNodeMap.get(expression));
        if (share === "none") return;
        const source = context.sourceCode.getText(expression);
        const data = { code: quote(source) };
        if (!inGenerator(statement)) {
          context.report({ node: statement, messageId: "floatingOutsideGenerator", data });
          return;
        }
        // `ready && U.sleep(1)` is a forgotten `yield*` too, but `yield*` in
        // front of it would not type-check: the fix is the author's to write.
        if (share === "some") {
          context.report({ node: statement, messageId: "floating", data });
          return;
        }
        // `yield*` binds more loosely than anything but the comma operator.
        const operand = expression.type === AST_NODE_TYPES.SequenceExpression ? `(${source})` : source;
        context.report({
          node: statement,
          messageId: "floating",
          data,
          suggest: [{ messageId: "runIt", data, fix: (fixer) => fixer.replaceText(expression, `yield* ${operand}`) }],
        });
      },
    };
  },
});
