/**
 * Chapter 5, "Retrospective": the book's small programs about Miou's rules,
 * each a function that runs it (with `B.run`) and says what happened. The
 * parallel tasks they use are in `tasks.ts`.
 */
import * as B from "@bobbin/core";
import { add, domainSelf, infinite, myParallelTask, selfAndCallee, yieldOnce } from "./tasks.js";

/**
 * "You can't forget your children": the main task returns while its child
 * is neither awaited nor cancelled, so the run fails with `StillHasChildren`.
 *
 * @example
 * ```ts
 * await forgottenChild();   // rejects with StillHasChildren
 * ```
 */
export function forgottenChild(): Promise<void> {
  return B.run(function* () {
    B.spawn(function* () {
      console.log("Hello World!");
    });
  });
}

/**
 * Background tasks in an `orphans` collector, cleaned up as they end: the
 * shape of the echo server's main loop (chapter 6) without sockets. Each of
 * `jobs` jobs is spawned into the collector; before spawning the next one,
 * an ended job (if any) is awaited; at the end, the rest are.
 * Returns how many jobs were awaited while the loop was still spawning.
 *
 * @example
 * ```ts
 * await backgroundJobs(10);   // e.g. 9: all but the last were cleaned up in the loop
 * ```
 */
export function backgroundJobs(jobs: number): Promise<number> {
  function* job(): Generator<B.Instruction, void, unknown> {
    yield* B.yieldNow();
  }
  function* cleanUp(orphans: B.Orphans<void>): Generator<B.Instruction, boolean, unknown> {
    const prm = B.care(orphans);
    if (prm === null || prm === undefined) return false; // none ended yet, or none at all
    yield* B.awaitExn(prm); // an error of a job would be raised here
    return true;
  }
  return B.run(function* () {
    const orphans = B.orphans<void>();
    let cleaned = 0;
    for (let i = 0; i < jobs; i++) {
      if (yield* cleanUp(orphans)) cleaned++;
      B.spawn({ orphans }, job);
      yield* B.yieldNow(); // the server would wait in accept here
    }
    for (const r of yield* B.drain(orphans)) if (!r.ok) throw r.error;
    return cleaned;
  });
}

/**
 * "Only the direct parent can wait for its children": `b` awaits its sibling
 * `a`, so `NotAChild` is raised (in `b`, then by the main task awaiting `b`).
 *
 * @example
 * ```ts
 * await awaitSibling();   // rejects with NotAChild
 * ```
 */
export function awaitSibling(): Promise<void> {
  return B.run(function* () {
    const a = B.spawn(function* () {
      yield* B.yieldNow();
    });
    const b = B.spawn(function* () {
      yield* B.awaitExn(a);
    });
    yield* B.awaitExn(a);
    yield* B.awaitExn(b);
  });
}

/**
 * Cancelling a child. `spawn` only queued it, so it is cancelled before it
 * ran and prints nothing. Returns the child's result: `Cancelled`.
 *
 * @example
 * ```ts
 * (await cancelChild()).ok;   // false, the error is Cancelled
 * ```
 */
export function cancelChild(): Promise<B.Result<void>> {
  return B.run(function* () {
    const prm = B.spawn(function* () {
      console.log("Hello World");
    });
    yield* B.cancel(prm);
    return yield* B.awaitTask(prm);
  });
}

/**
 * "You can only cancel your direct children": `b` cancels its sibling `a`,
 * so `NotAChild` is raised.
 *
 * @example
 * ```ts
 * await cancelSibling();   // rejects with NotAChild
 * ```
 */
export function cancelSibling(): Promise<void> {
  return B.run(function* () {
    const a = B.spawn(function* () {
      yield* B.yieldNow();
    });
    const b = B.spawn(function* () {
      yield* B.cancel(a);
    });
    yield* B.awaitExn(a);
    yield* B.awaitExn(b);
  });
}

/**
 * "Cancellation overrides any promise state": a parallel task computes
 * `1 + 1`, is awaited (2), then cancelled; awaiting it again gives
 * `Cancelled`. Returns both results.
 *
 * @example
 * ```ts
 * const [before, after] = await cancelAfterCompletion();   // { ok: true, value: 2 }, { ok: false, error: Cancelled }
 * ```
 */
export function cancelAfterCompletion(): Promise<[B.Result<number>, B.Result<number>]> {
  return B.run(
    function* () {
      const prm = B.call(add, 1, 1);
      const before = yield* B.awaitTask(prm);
      yield* B.cancel(prm);
      const after = yield* B.awaitTask(prm);
      return [before, after] as [B.Result<number>, B.Result<number>];
    },
    { domains: 1 },
  );
}

/**
 * "Cancelling a task implies cancelling all its sub-tasks": `p` awaits `q`,
 * a parallel task that never ends; cancelling `p` cancels `q` on its domain,
 * and `cancel` returns once both have ended. Returns `p`'s result.
 *
 * @example
 * ```ts
 * (await cancelSubtree()).ok;   // false: Cancelled
 * ```
 */
export function cancelSubtree(): Promise<B.Result<void>> {
  return B.run(
    function* () {
      const p = B.spawn(function* () {
        const q = B.call(infinite);
        yield* B.awaitExn(q);
      });
      yield* B.yieldNow(); // let p start q
      yield* B.cancel(p);
      return yield* B.awaitTask(p);
    },
    { domains: 1 },
  );
}

/**
 * "Cancellation is asynchronous": while the main task waits for the
 * parallel `p1` to be cancelled, `p0` runs. Returns the lines printed, in
 * order: "Cancel p1", "Do p0", "p1 cancelled".
 *
 * @example
 * ```ts
 * await cancellationLetsOthersRun();   // ["Cancel p1", "Do p0", "p1 cancelled"]
 * ```
 */
export function cancellationLetsOthersRun(): Promise<string[]> {
  const lines: string[] = [];
  const print = (line: string): void => {
    lines.push(line);
    console.log(line);
  };
  return B.run(
    function* () {
      const p1 = B.call(yieldOnce);
      const p0 = B.spawn(function* () {
        print("Do p0");
      });
      print("Cancel p1");
      yield* B.cancel(p1);
      print("p1 cancelled");
      yield* B.awaitExn(p0);
      return lines;
    },
    { domains: 1 },
  );
}

/**
 * "To launch a task in parallel": the task prints "My parallel task." on
 * another domain. Returns that domain (never 0).
 *
 * @example
 * ```ts
 * await parallelTask();   // 1
 * ```
 */
export function parallelTask(): Promise<number> {
  return B.run(function* () {
    const prm = B.call(myParallelTask);
    return yield* B.awaitExn(prm);
  });
}

/**
 * "A task in parallel runs in a different domain than the one it was
 * created in": a parallel task calls another; their domains differ. Returns
 * the two domains.
 *
 * @example
 * ```ts
 * const [u, v] = await callFromCallee();   // u !== v
 * ```
 */
export function callFromCallee(): Promise<[number, number]> {
  return B.run(
    function* () {
      const p = B.call(selfAndCallee);
      return yield* B.awaitExn(p);
    },
    { domains: 3 },
  );
}

/**
 * "The choice of the domain is made randomly": two calls in a row may land
 * on the same domain. Loops until they do; returns how many tries it took.
 *
 * @example
 * ```ts
 * await sameDomainTwice();   // e.g. 2
 * ```
 */
export function sameDomainTwice(): Promise<number> {
  return B.run(
    function* () {
      for (let tries = 1; ; tries++) {
        const p = B.call(domainSelf);
        const q = B.call(domainSelf);
        const u = yield* B.awaitExn(p);
        const v = yield* B.awaitExn(q);
        if (u === v) return tries;
      }
    },
    { domains: 3 },
  );
}

/**
 * "Distribute a specific task to all our available domains": `parallel`
 * over three inputs with three worker domains runs one on each. Returns the
 * domains, in input order: `[1, 2, 3]`.
 *
 * @example
 * ```ts
 * await parallelOverDomains();   // [1, 2, 3]
 * ```
 */
export function parallelOverDomains(): Promise<number[]> {
  return B.run(
    function* () {
      const results = yield* B.parallel(domainSelf, [undefined, undefined, undefined]);
      return results.map((r) => {
        if (!r.ok) throw r.error;
        return r.value;
      });
    },
    { domains: 3 },
  );
}

/**
 * "dom0 will never be assigned a task via call", but `spawn` runs on the
 * caller's domain: a spawned task plus `parallel` over three worker
 * domains covers every domain. Returns `[0, 1, 2, 3]`.
 *
 * @example
 * ```ts
 * await everyDomain();   // [0, 1, 2, 3]
 * ```
 */
export function everyDomain(): Promise<number[]> {
  return B.run(
    function* () {
      const prm = B.spawn(domainSelf.body, undefined);
      const results = [yield* B.awaitTask(prm), ...(yield* B.parallel(domainSelf, [undefined, undefined, undefined]))];
      return results.map((r) => {
        if (!r.ok) throw r.error;
        return r.value;
      });
    },
    { domains: 3 },
  );
}
