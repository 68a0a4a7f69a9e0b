/**
 * A reproduction: the one line that makes a simulation again, exactly.
 * Either the seed its choices were drawn from and the policy that drew its
 * schedule (`seed=123 policy=pct depth=3 steps=412`), or its choices
 * themselves (`schedule=…`, see schedule.ts), which no generator needs:
 * a shrunk failure, a path of `explore`. Plus the options that change what
 * happens (`limit=`, `domains=`). Everything else comes from the `build`
 * function that declares the world.
 */
import { maxDomains } from "@bobbin/core/lowlevel";
import { POLICY_NAMES, type PolicyName } from "./policy.js";
import { formatSchedule, parseSchedule, type ScheduleLists } from "./schedule.js";

/** @internal What a reproduction line holds. */
export type Repro = (SeedRepro | ScheduleRepro) & {
  /** The time limit in virtual seconds, when not the default. */
  readonly limit?: number | undefined;
  /** How many simulated worker domains, when not the default. */
  readonly domains?: number | undefined;
};

/** @internal A run whose choices were drawn from a seed. */
export interface SeedRepro {
  readonly seed: number;
  readonly policy: PolicyName;
  /** PCT's depth and step horizon. */
  readonly depth?: number | undefined;
  readonly steps?: number | undefined;
}

/** @internal A run that follows its choices. */
export interface ScheduleRepro {
  readonly schedule: ScheduleLists;
}

const KEYS = ["seed", "policy", "depth", "steps", "schedule", "limit", "domains"] as const;

/** @internal The line for `repro`. */
export function formatRepro(repro: Repro): string {
  const parts: string[] = [];
  if ("schedule" in repro) parts.push(`schedule=${formatSchedule(repro.schedule)}`);
  else {
    parts.push(`seed=${repro.seed}`, `policy=${repro.policy}`);
    if (repro.depth !== undefined) parts.push(`depth=${repro.depth}`);
    if (repro.steps !== undefined) parts.push(`steps=${repro.steps}`);
  }
  if (repro.limit !== undefined) parts.push(`limit=${repro.limit}`);
  if (repro.domains !== undefined) parts.push(`domains=${repro.domains}`);
  return parts.join(" ");
}

const count = (n: number): boolean => Number.isSafeInteger(n) && n >= 1;

/** How each number field is written, what its value must be, and that rule in words. */
const NUMBERS = {
  depth: { form: /^[1-9]\d*$/, valid: count, rule: "an integer ≥ 1" },
  steps: { form: /^[1-9]\d*$/, valid: count, rule: "an integer ≥ 1" },
  // What `run` takes, so that a line is refused when read rather than once its world runs.
  domains: {
    form: /^(0|[1-9]\d*)$/,
    valid: (n: number) => Number.isSafeInteger(n) && n <= maxDomains,
    rule: `an integer from 0 to ${maxDomains}`,
  },
  limit: {
    form: /^(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?$/,
    valid: (n: number) => Number.isFinite(n) && n > 0,
    rule: "a number of virtual seconds > 0",
  },
} as const;

/**
 * @internal Reads a reproduction line, strictly: each field at most once,
 * each value written as `formatRepro` writes it.
 * @throws TypeError when `text` is not one, naming the field and the rule.
 */
export function parseRepro(text: unknown): Repro {
  const usage = 'replay(build, repro) expects the line a failure\'s repro gave, such as "seed=123 policy=random" or "schedule=CA."';
  if (typeof text !== "string") throw new TypeError(`${usage}; got ${typeof text}`);
  const fields = new Map<string, string>();
  for (const part of text.trim().split(/\s+/)) {
    const eq = part.indexOf("=");
    const key = part.slice(0, eq);
    if (eq <= 0 || !(KEYS as readonly string[]).includes(key))
      throw new TypeError(`${usage}; "${part}" is not one of its fields (${KEYS.join(", ")})`);
    if (fields.has(key)) throw new TypeError(`${usage}; "${key}" is given twice`);
    fields.set(key, part.slice(eq + 1));
  }
  const number = (key: keyof typeof NUMBERS): number | undefined => {
    const value = fields.get(key);
    if (value === undefined) return undefined;
    const { form, valid, rule } = NUMBERS[key];
    const n = Number(value);
    if (!form.test(value) || !valid(n)) throw new TypeError(`${usage}; ${key} must be ${rule}, got ${JSON.stringify(value)}`);
    return n;
  };
  const options = { limit: number("limit"), domains: number("domains") };
  const schedule = fields.get("schedule");
  if (schedule !== undefined) {
    const drawn = ["seed", "policy", "depth", "steps"].filter((key) => fields.has(key));
    if (drawn.length !== 0) throw new TypeError(`${usage}; a schedule line has no ${drawn.join(", ")} (its choices are in the schedule)`);
    return { schedule: parseSchedule(schedule, usage), ...options };
  }
  const seedText = fields.get("seed");
  const seed = Number(seedText);
  if (seedText === undefined || !/^-?(0|[1-9]\d*)$/.test(seedText) || !Number.isSafeInteger(seed)) {
    throw new TypeError(`${usage}; its seed is missing or not an integer`);
  }
  const policy = fields.get("policy") as PolicyName;
  if (!POLICY_NAMES.includes(policy)) throw new TypeError(`${usage}; its policy must be one of ${POLICY_NAMES.join(", ")}`);
  return { seed, policy, depth: number("depth"), steps: number("steps"), ...options };
}
