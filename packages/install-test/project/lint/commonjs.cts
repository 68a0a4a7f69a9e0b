// A CommonJS TypeScript module (module: NodeNext): require() of the ES
// modules type-checks (TypeScript 5.8 and later), and the plugin comes whole.
import B = require("@bobbin/core");
import U = require("@bobbin/unix");
import bobbin = require("@bobbin/eslint-plugin");

export const answer: Promise<number> = U.run(function* () {
  const child = B.spawn(function* () {
    return 21 * 2;
  });
  return yield* B.awaitExn(child);
});
export const rule: string = Object.keys(bobbin.rules)[0]!;
