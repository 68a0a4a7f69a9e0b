/**
 * A program's entry and a backend author's are two surfaces: `@bobbin/unix`
 * and `@bobbin/native-poll` export what a program uses, and the kit backends
 * are written with lives in their `/backend` entries. The declarations a
 * program's import reads — its entry's `.d.ts` and the chunks it imports —
 * name none of the kit.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { closure, identifiers } from "./support/identifiers.js";
import { publishedPackages } from "./support/packages.js";

/** What `@bobbin/unix/backend` holds and `@bobbin/unix` must not show. */
const UNIX_KIT = [
  "Parked",
  "ParkedBase",
  "BufferOp",
  "NodeLoop",
  "NodeBackend",
  "Timers",
  "DeadlineHeap",
  "checkTimeouts",
  "ShareGuard",
  "BACKEND_METHODS",
  "WaitQueue",
  "ParkedCount",
  "ReceiveQueue",
  "ColdState",
  "ReadOp",
  "NodeWrites",
  "NodeWriteOp",
  "NodeSocket",
  "OpenOp",
  "CloseOp",
  "PollOp",
  "AGAIN",
  "BackendSocket",
  "LiveSockets",
  "NodeServer",
  "NodeDatagram",
  "AdoptedServer",
  "describeListener",
  "adoptDescriptor",
  "afterHandleClose",
  "SocketFile",
  "LibuvBackend",
  "isStreamKind",
  "systemError",
  "runOnBackend",
  "BackendRunOptions",
];

/** What `@bobbin/native-poll/backend` holds and `@bobbin/native-poll` must not show (nor the backends' classes). */
const NATIVE_KIT = ["Poller", "PollEvent", "syscalls", "Errno", "loadNative", "checkErrno", "errnoException", "errnoName"];
const NATIVE_INTERNALS = ["EpollBackend", "IoUringBackend", "RawBackend", "RawSocket", "Ring", ...UNIX_KIT];

/** Names 0.1's main entry exported and no program sees any more (renamed, or gone into a queue's methods). */
const UNIX_GONE = ["removeWaiter", "wakeAll", "Ownership"];

/** The identifiers a program's import of `entry` reads. */
function namesOf(pkg: string, entry: "." | "./backend"): Set<string> {
  const found = publishedPackages().find((p) => p.name === pkg);
  if (found === undefined) throw new Error(`${pkg} is not a published package of this workspace`);
  const manifest = JSON.parse(readFileSync(join(found.dir, "package.json"), "utf8")) as {
    exports: Record<string, { types: string }>;
  };
  const types = manifest.exports[entry]?.types;
  if (types === undefined) throw new Error(`${pkg} has no "${entry}" entry with types in its exports`);
  const names = new Set<string>();
  for (const file of closure(join(found.dir, types))) for (const name of identifiers(readFileSync(file, "utf8"))) names.add(name);
  return names;
}

describe.each([
  { pkg: "@bobbin/unix", kit: UNIX_KIT, internals: [...UNIX_KIT, ...UNIX_GONE] },
  { pkg: "@bobbin/native-poll", kit: NATIVE_KIT, internals: NATIVE_INTERNALS },
])("$pkg: a program's entry and the backend author's", ({ pkg, kit, internals }) => {
  it("the main entry's declarations (and the chunks they import) name nothing of the author's kit", () => {
    const names = namesOf(pkg, ".");
    expect(
      internals.filter((name) => names.has(name)),
      `${pkg}: these belong to ${pkg}/backend, not to what a program imports`,
    ).toEqual([]);
  });

  it("the /backend entry has the kit", () => {
    const names = namesOf(pkg, "./backend");
    expect(kit.filter((name) => !names.has(name))).toEqual([]);
  });
});
