#!/usr/bin/env node
// The install test: every public package as the registry would serve it,
// installed and used the way a user does, outside this workspace.
//
//   pnpm --filter @bobbin/install-test test:install
//   node packages/install-test/run.mjs --keep       # keeps the projects (their path is printed)
//
// 1. Builds (turbo: cached when nothing changed), makes this platform's
//    prebuilt addon (packages/native-poll/scripts/prebuild.mjs) and packs every
//    public package with pnpm pack; a second native-poll tarball has no
//    prebuilt binary. publint and attw check each tarball; each carries the
//    root LICENSE.
// 2. npm: a fresh project installs the tarballs (the install script finds the
//    prebuilt binary), runs a program on each backend there (smoke.mjs) and a
//    CommonJS consumer (consumer.cjs), also on the Node binaries named by
//    BOBBIN_NODE_LINES (.ci/run passes Node 22's and 24's).
// 3. pnpm: the same in a fresh project under pnpm's defaults (no dependency
//    build script runs: the prebuilt binary is loaded as it is), plus
//    @bobbin/unix/conformance through the project's own vitest.
// 3b. The backend template @bobbin/unix ships (template/create.mjs): a fresh
//    backend project builds and passes the conformance suite with its own vitest.
// 4. No compiler: npm installs the tarball without a prebuilt binary with
//    PATH holding only node, python3 and sh: the install says what happened
//    and how to build, and programs run on the libuv backend.
// 5. The lint rule on a planted forgotten yield*, with ESLint 9 and 10 and
//    TypeScript 5 and 6, and a CommonJS TypeScript module type-checked.
//
// Only the npm registry is reached (npm's and pnpm's caches make reruns
// quick). Every command has a time limit. The last line counts the checks.

import { spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, "..", "..");
const PUBLIC = ["core", "sync", "unix", "native-poll", "http", "sim", "opentelemetry", "eslint-plugin"];
const RUNTIME = ["core", "sync", "unix", "native-poll", "http", "sim", "opentelemetry"];
/** What a user installs beside a package that only names it as a peer (`@bobbin/opentelemetry` uses the API the program uses). */
const PEERS = {
  opentelemetry: JSON.parse(readFileSync(join(repo, "packages/opentelemetry/package.json"), "utf8")).peerDependencies,
};
/** The dependencies the user's projects take from the registry, in the ranges the workspace tests. */
const VITEST = JSON.parse(readFileSync(join(repo, "package.json"), "utf8")).devDependencies.vitest;
const LINT_MATRIX = [
  { eslint: "^9", typescript: "^5" },
  { eslint: "^9", typescript: "~6.0.0" },
  { eslint: "^10", typescript: "~6.0.0" },
  { eslint: "^10", typescript: "^5" },
];
const MINUTE = 60_000;
/** Other Node binaries (BOBBIN_NODE_LINES: their bin directories, separated by ':') that run the CommonJS consumer too. */
const OTHER_NODES = (process.env.BOBBIN_NODE_LINES ?? "")
  .split(":")
  .filter((dir) => dir !== "")
  .map((dir) => join(dir, "node"));

const work = mkdtempSync(join(tmpdir(), "bobbin-install-test-"));
const started = Date.now();
let passed = 0;
let failed = 0;

/** Records one check; prints what it saw when it fails. */
function check(name, ok, detail = "") {
  if (ok) passed++;
  else failed++;
  console.log(`${ok ? "✓" : "✗"} ${name}`);
  if (!ok && detail !== "") console.log(detail.replace(/^/gm, "    "));
  return ok;
}

/** Runs a command to its end (bounded by `timeout`); its output comes back, and is shown with the command. */
function sh(command, args, { cwd = repo, env = process.env, timeout = 5 * MINUTE } = {}) {
  const t0 = Date.now();
  // Without colours: the checks read the text.
  const plain = { ...env, NO_COLOR: "1", FORCE_COLOR: "0" };
  const r = spawnSync(command, args, { cwd, env: plain, encoding: "utf8", timeout, maxBuffer: 64 * 1024 * 1024 });
  const out = `${r.stdout ?? ""}${r.stderr ?? ""}`;
  const status = r.error ? `${r.error.message}` : `exit ${r.status ?? r.signal}`;
  console.log(`$ ${[command, ...args].join(" ")}   (in ${cwd}; ${status}, ${((Date.now() - t0) / 1000).toFixed(1)} s)`);
  return { ok: r.status === 0, out };
}

/** npm's own script (npm-cli.js), run with this Node: also where PATH holds nothing else. */
const npm = realpathSync(sh("sh", ["-c", "command -v npm"]).out.trim());
const pnpm = "pnpm";

// -- 1. tarballs -------------------------------------------------------------------------

const nativeDir = join(repo, "packages", "native-poll");
const madePrebuilds = !existsSync(join(nativeDir, "prebuilds"));
const packs = join(work, "packs");
const plainPacks = join(work, "packs-without-prebuilt");
mkdirSync(plainPacks, { recursive: true });
/** package directory name → tarball path */
const tarball = {};

try {
  const built = sh(pnpm, ["build"], { timeout: 15 * MINUTE });
  if (!check("pnpm build", built.ok, built.out.slice(-4000))) throw new Error("the build failed");
  const prebuilt = sh(process.execPath, [join(nativeDir, "scripts", "prebuild.mjs")], { timeout: 10 * MINUTE });
  const binary = join(
    "prebuilds",
    `${process.platform}-${process.arch}`,
    process.platform === "linux" ? "node.napi.glibc.node" : "node.napi.node",
  );
  check(`the prebuilt addon ${binary}`, prebuilt.ok && existsSync(join(nativeDir, binary)), prebuilt.out.slice(-4000));

  for (const name of PUBLIC) {
    const r = sh(pnpm, ["pack", "--pack-destination", packs], { cwd: join(repo, "packages", name) });
    const file = readdirSync(packs).find((f) => f.startsWith(`bobbin-${name}-`) && f.endsWith(".tgz"));
    if (check(`pnpm pack @bobbin/${name}`, r.ok && file !== undefined, r.out)) tarball[name] = join(packs, file);
  }
  if (Object.keys(tarball).length !== PUBLIC.length) throw new Error("a package did not pack");

  const license = readFileSync(join(repo, "LICENSE"), "utf8");
  for (const name of PUBLIC) {
    const list = sh("tar", ["tzf", tarball[name]]).out.split("\n");
    const shipped = sh("tar", ["xzOf", tarball[name], "package/LICENSE"]).out;
    check(`@bobbin/${name}'s tarball carries the root LICENSE`, shipped === license);
    const lint = sh("pnpm", ["exec", "publint", "run", "--strict", "--level", "suggestion", tarball[name]]);
    check(`publint @bobbin/${name}: nothing to report`, lint.ok && lint.out.includes("All good!"), lint.out);
    // ES modules only, on purpose: require() of them is Node's require(esm) (README, "require and import").
    // @bobbin/core/worker is a worker thread's entry (for bundlers), not an API: it has no types.
    const attw = [
      tarball[name],
      "--profile",
      "esm-only",
      "--format",
      "ascii",
      ...(name === "core" ? ["--exclude-entrypoints", "./worker"] : []),
    ];
    const types = sh("pnpm", ["exec", "attw", ...attw]);
    check(`attw @bobbin/${name}: nothing to report`, types.ok, types.out);
    if (name === "native-poll") {
      check("native-poll's tarball carries the prebuilt addon", list.includes(`package/${binary}`), list.join("\n"));
      check(
        "native-poll's tarball ships no script that needs what is not shipped",
        !list.some((f) => /valgrind|prebuild\.mjs/.test(f)),
        list.join("\n"),
      );
    }
  }

  // The same native-poll without its prebuilt binary (a platform nobody prebuilt for).
  const unpacked = join(work, "unpacked");
  mkdirSync(unpacked);
  sh("tar", ["xzf", tarball["native-poll"], "-C", unpacked]);
  rmSync(join(unpacked, "package", "prebuilds"), { recursive: true, force: true });
  const plainNative = join(plainPacks, "bobbin-native-poll.tgz");
  check("native-poll repacked without its prebuilt binary", sh("tar", ["czf", plainNative, "-C", unpacked, "package"]).ok);

  // -- the projects ------------------------------------------------------------------------

  /** A fresh project in `dir` that depends on `names` from their tarballs (each also pinned for the packages' own dependencies). */
  function project(dir, names, { devDependencies = {}, files = [], native = tarball["native-poll"], manager = "npm" } = {}) {
    mkdirSync(dir, { recursive: true });
    const spec = (name) => `file:${name === "native-poll" ? native : tarball[name]}`;
    const dependencies = Object.fromEntries(names.map((n) => [`@bobbin/${n}`, spec(n)]));
    for (const n of names) Object.assign(dependencies, PEERS[n]);
    const pkg = { name: "bobbin-user", version: "1.0.0", private: true, type: "module", dependencies, devDependencies };
    const pinned = ["core", "sync", "unix"];
    if (manager === "npm") {
      // The packages' own dependencies on one another take the tarballs too.
      pkg.overrides = Object.fromEntries(pinned.map((n) => [`@bobbin/${n}`, `$@bobbin/${n}`]));
      // npm 12 runs a dependency's install script only when the project allows it.
      pkg.allowScripts = { "@bobbin/native-poll": true };
    } else {
      writeFileSync(join(dir, "pnpm-workspace.yaml"), `overrides:\n${pinned.map((n) => `  "@bobbin/${n}": "${spec(n)}"\n`).join("")}`);
    }
    writeFileSync(join(dir, "package.json"), `${JSON.stringify(pkg, null, 2)}\n`);
    for (const f of files) cpSync(join(here, "project", f), join(dir, f), { recursive: true });
    return dir;
  }

  /**
   * Runs smoke.mjs in `dir`: each backend of `backends` must echo; io_uring
   * must too where it is available, and say why not elsewhere; each of
   * `unavailable` must say it is, with NativeUnavailable's message.
   */
  function smoke(label, dir, { env = process.env, backends, unavailable = [] }) {
    const r = sh(process.execPath, ["smoke.mjs"], { cwd: dir, env, timeout: 2 * MINUTE });
    const echoed = (b) => r.out.includes(`${b}: 100000 bytes echoed, every byte the same`);
    for (const b of backends) check(`${label}: a program on the ${b} backend`, r.ok && echoed(b), r.out);
    if (backends.includes("native")) {
      const uring = /^io_uring: unavailable: (.+)$/m.exec(r.out);
      check(
        `${label}: ${uring === null ? "a program on the io_uring backend" : `io_uring is unavailable here (${uring[1]})`}`,
        echoed("io_uring") || uring !== null,
        r.out,
      );
    }
    for (const b of unavailable)
      check(
        `${label}: the ${b} backend is unavailable, with NativeUnavailable's advice`,
        r.ok && r.out.includes(`${b}: unavailable: `),
        r.out,
      );
    return r.out;
  }

  // -- 2. npm ------------------------------------------------------------------------------
  const npmDir = project(join(work, "npm"), RUNTIME, { files: ["smoke.mjs", "consumer.cjs"] });
  const npmInstall = sh(process.execPath, [npm, "install", "--no-audit", "--no-fund", "--foreground-scripts"], {
    cwd: npmDir,
    timeout: 10 * MINUTE,
  });
  check("npm install of the tarballs", npmInstall.ok, npmInstall.out);
  check(
    "npm: the install script took the prebuilt addon",
    npmInstall.out.includes(`@bobbin/native-poll: using the prebuilt binary ${binary}`),
    npmInstall.out,
  );
  smoke("npm", npmDir, { backends: ["libuv", "native"] });
  for (const node of [process.execPath, ...OTHER_NODES]) {
    const version = sh(node, ["--version"]).out.trim();
    const cjs = sh(node, ["consumer.cjs"], { cwd: npmDir });
    check(
      `npm, Node ${version}: a CommonJS consumer require()s every package, the same modules as import`,
      cjs.ok && cjs.out.includes("commonjs consumer: ok"),
      cjs.out,
    );
  }

  // -- 3. pnpm -----------------------------------------------------------------------------
  const pnpmDir = project(join(work, "pnpm"), RUNTIME, {
    manager: "pnpm",
    devDependencies: { vitest: VITEST },
    files: ["smoke.mjs", "consumer.cjs", "conformance.test.mjs"],
  });
  const pnpmInstall = sh(pnpm, ["install"], { cwd: pnpmDir, timeout: 10 * MINUTE });
  check("pnpm install of the tarballs", pnpmInstall.ok, pnpmInstall.out);
  const installed = realpathSync(join(pnpmDir, "node_modules", "@bobbin", "native-poll"));
  check("pnpm: no build ran (pnpm runs no dependency's build script unless allowed)", !existsSync(join(installed, "build")));
  smoke("pnpm (the prebuilt addon, loaded as it is)", pnpmDir, { backends: ["libuv", "native"] });
  const pnpmCjs = sh(process.execPath, ["consumer.cjs"], { cwd: pnpmDir });
  check(
    "pnpm: a CommonJS consumer require()s every package, the same modules as import",
    pnpmCjs.ok && pnpmCjs.out.includes("commonjs consumer: ok"),
    pnpmCjs.out,
  );
  const suite = sh(pnpm, ["exec", "vitest", "run", "conformance.test.mjs"], { cwd: pnpmDir, timeout: 10 * MINUTE });
  check(
    "pnpm: @bobbin/unix/conformance passes on libuv and native, run by the project's vitest",
    suite.ok && /Tests\s+\d+ passed/.test(suite.out),
    suite.out.slice(-6000),
  );

  // -- 3b. the backend template -------------------------------------------------------------
  // A stranger's backend project, made by the template @bobbin/unix ships, outside the workspace:
  // it builds, and the conformance suite passes there, run by the project's own vitest.
  const templateDir = join(work, "template-backend");
  const create = sh(process.execPath, [
    join(pnpmDir, "node_modules", "@bobbin", "unix", "template", "create.mjs"),
    templateDir,
    "my-backend",
  ]);
  if (
    check("the template's create.mjs makes a backend project", create.ok && existsSync(join(templateDir, "src", "index.ts")), create.out)
  ) {
    const made = JSON.parse(readFileSync(join(templateDir, "package.json"), "utf8"));
    const pinned = project(join(work, "template-pins"), ["core", "sync", "unix"], { manager: "npm" });
    const pins = JSON.parse(readFileSync(join(pinned, "package.json"), "utf8"));
    made.dependencies = { "@bobbin/core": pins.dependencies["@bobbin/core"], "@bobbin/unix": pins.dependencies["@bobbin/unix"] };
    // A direct dependency is overridden by reference (npm wants that); @bobbin/sync, which only
    // @bobbin/unix depends on, by its tarball: a reference to a dependency the project lacks is no pin.
    made.overrides = Object.fromEntries(
      Object.keys(pins.overrides).map((name) => [name, name in made.dependencies ? `$${name}` : pins.dependencies[name]]),
    );
    writeFileSync(join(templateDir, "package.json"), `${JSON.stringify(made, null, 2)}\n`);
    const install = sh(process.execPath, [npm, "install", "--no-audit", "--no-fund"], { cwd: templateDir, timeout: 10 * MINUTE });
    check("template: npm install", install.ok, install.out);
    const test = sh(process.execPath, [npm, "test"], { cwd: templateDir, timeout: 10 * MINUTE });
    check(
      "template: npm test builds the backend and the conformance suite passes on it, run by the project's vitest",
      test.ok && /Tests\s+\d+ passed/.test(test.out),
      test.out.slice(-6000),
    );
  }

  // -- 4. no compiler ----------------------------------------------------------------------
  const bin = join(work, "bin-without-compiler");
  mkdirSync(bin);
  const python = sh("python3", ["-c", "import sys; print(sys.executable)"]).out.trim();
  for (const [name, target] of [
    ["node", process.execPath],
    ["python3", python],
    ["sh", "/bin/sh"],
  ])
    symlinkSync(target, join(bin, name));
  const { CC: _cc, CXX: _cxx, ...env } = process.env;
  const bare = { ...env, PATH: bin };
  const compilers = "for c in cc gcc c++ g++ clang clang++ make; do command -v $c && exit 1; done; exit 0";
  check("no compiler: none of cc, gcc, c++, g++, clang, make on PATH", sh("/bin/sh", ["-c", compilers], { env: bare }).ok);
  const bareDir = project(join(work, "no-compiler"), RUNTIME, { native: plainNative, files: ["smoke.mjs"] });
  const bareInstall = sh(process.execPath, [npm, "install", "--no-audit", "--no-fund", "--foreground-scripts"], {
    cwd: bareDir,
    env: bare,
    timeout: 10 * MINUTE,
  });
  check("no compiler: npm install succeeds", bareInstall.ok, bareInstall.out);
  check(
    "no compiler: the install says what happened and how to build, for npm, pnpm and yarn",
    [
      `the native addon was not built (no prebuilt binary for ${process.platform}-${process.arch}, and`,
      "libuv backend",
      "npm rebuild @bobbin/native-poll",
      "pnpm approve-builds",
      "yarn rebuild @bobbin/native-poll",
    ].every((s) => bareInstall.out.includes(s)),
    bareInstall.out,
  );
  const bareSmoke = smoke("no compiler", bareDir, { env: bare, backends: ["libuv"], unavailable: ["native"] });
  check(
    "no compiler: NativeUnavailable says how to build, in the user's project",
    bareSmoke.includes("npm rebuild @bobbin/native-poll"),
    bareSmoke,
  );

  // -- 5. the lint rule --------------------------------------------------------------------
  const lintDir = project(join(work, "lint"), ["core", "sync", "unix", "eslint-plugin"], {
    devDependencies: { "typescript-eslint": "^8", "@types/node": "^20" },
    files: ["lint"],
  });
  cpSync(join(lintDir, "lint"), lintDir, { recursive: true });
  rmSync(join(lintDir, "lint"), { recursive: true });
  for (const { eslint, typescript } of LINT_MATRIX) {
    const label = `ESLint ${eslint}, TypeScript ${typescript}`;
    const add = sh(
      process.execPath,
      [npm, "install", "--no-audit", "--no-fund", "--save-dev", `eslint@${eslint}`, `typescript@${typescript}`],
      { cwd: lintDir, timeout: 10 * MINUTE },
    );
    if (!check(`${label}: npm installs the plugin beside them (its peer ranges)`, add.ok, add.out)) continue;
    const versions = sh(process.execPath, ["-e", "console.log(require('eslint/package.json').version, require('typescript').version)"], {
      cwd: lintDir,
    }).out.trim();
    const lint = sh(process.execPath, [join(lintDir, "node_modules", "eslint", "bin", "eslint.js"), "--format", "json", "src"], {
      cwd: lintDir,
      timeout: 3 * MINUTE,
    });
    let messages = [];
    try {
      messages = JSON.parse(lint.out.slice(lint.out.indexOf("["))).flatMap((f) => f.messages);
    } catch {
      // not JSON: ESLint failed; the check below shows its output
    }
    check(
      `${label} (${versions}): the forgotten yield* on line 6 is reported, and nothing else`,
      messages.length === 1 && messages[0].ruleId === "@bobbin/no-floating-operation" && messages[0].line === 6,
      lint.out.slice(-4000),
    );
    const tsc = sh(process.execPath, [join(lintDir, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.cjs.json"], {
      cwd: lintDir,
    });
    check(`${label}: a CommonJS TypeScript module require()s the packages with their types`, tsc.ok, tsc.out);
  }
  // A user's project takes the newest @types/node, not the line the workspace pins: every
  // declaration file checked against it catches a Node type the packages name and Node dropped.
  const newest = sh(process.execPath, [npm, "install", "--no-audit", "--no-fund", "--save-dev", "@types/node@latest"], {
    cwd: lintDir,
    timeout: 10 * MINUTE,
  });
  if (check("the newest @types/node installs", newest.ok, newest.out)) {
    const typesVersion = sh(process.execPath, ["-e", "console.log(require('@types/node/package.json').version)"], {
      cwd: lintDir,
    }).out.trim();
    const strict = sh(process.execPath, [join(lintDir, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.types.json"], {
      cwd: lintDir,
    });
    check(`@types/node ${typesVersion}, skipLibCheck off: the packages' declarations type-check`, strict.ok, strict.out);
  }
} catch (error) {
  check(`the install test ran to its end (${error.message})`, false);
} finally {
  if (madePrebuilds) rmSync(join(nativeDir, "prebuilds"), { recursive: true, force: true });
  if (process.argv.includes("--keep")) console.log(`kept ${work}`);
  else rmSync(work, { recursive: true, force: true });
}

console.log(`install test: ${((Date.now() - started) / 1000).toFixed(0)} s`);
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed === 0 ? 0 : 1);
