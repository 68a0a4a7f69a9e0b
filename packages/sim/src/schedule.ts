/**
 * A schedule, written out: the choices of a run as the `schedule=` field of
 * a reproduction line — the schedule's list, a dot, the data's list.
 *
 * Most choices are the first value (0: the task ready longest, no loss…), so
 * a list is written sparsely: for each choice that is not 0, how many 0s
 * came before it since the last one, then its value minus 1; trailing 0s
 * are left out (past its end, a list reads as 0s). Each number is a varint
 * of base64url characters: 5 bits per character, least significant first,
 * the first 32 characters ending a number and the other 32 continuing it.
 * A run that kept to the runtime's order with two reorderings writes in a
 * few characters; a simple number in [0, 1) in one or two (see
 * `floatValue`).
 */

const DIGITS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
/** The most choices a line may hold, read back (a larger gap is not a line this simulator wrote). */
const MOST = 2 ** 26;

/** @internal A schedule's two lists. */
export interface ScheduleLists {
  readonly schedule: readonly number[];
  readonly data: readonly number[];
}

/** @internal The `schedule=` field's value for these lists. */
export function formatSchedule(lists: ScheduleLists): string {
  return `${encodeList(lists.schedule)}.${encodeList(lists.data)}`;
}

function encodeList(values: readonly number[]): string {
  let text = "";
  let zeros = 0;
  for (const value of values) {
    if (value === 0) {
      zeros++;
      continue;
    }
    text += varint(zeros) + varint(value - 1);
    zeros = 0;
  }
  return text;
}

function varint(n: number): string {
  let text = "";
  while (n >= 32) {
    text += DIGITS[32 + (n % 32)];
    n = Math.floor(n / 32);
  }
  return text + DIGITS[n];
}

/**
 * @internal Reads a `schedule=` field's value.
 * @throws TypeError naming what is wrong with it.
 */
export function parseSchedule(text: string, usage: string): ScheduleLists {
  const parts = text.split(".");
  if (parts.length !== 2) throw new TypeError(`${usage}; its schedule must be two lists joined by a dot, got ${JSON.stringify(text)}`);
  return { schedule: decodeList(parts[0]!, usage), data: decodeList(parts[1]!, usage) };
}

function decodeList(text: string, usage: string): number[] {
  const values: number[] = [];
  let at = 0;
  const read = (): number => {
    let n = 0;
    let scale = 1;
    for (;;) {
      if (at === text.length) throw new TypeError(`${usage}; its schedule ends in the middle of a number`);
      const digit = DIGITS.indexOf(text[at++]!);
      if (digit < 0)
        throw new TypeError(`${usage}; its schedule holds ${JSON.stringify(text[at - 1])}, which is not a base64url character`);
      n += (digit % 32) * scale;
      scale *= 32;
      if (digit < 32) return n;
      if (scale > 2 ** 55) throw new TypeError(`${usage}; its schedule holds a number of more than 53 bits`);
    }
  };
  while (at < text.length) {
    const zeros = read();
    const value = read() + 1;
    if (values.length + zeros >= MOST) throw new TypeError(`${usage}; its schedule holds more than ${MOST} choices`);
    for (let i = 0; i < zeros; i++) values.push(0);
    values.push(value);
  }
  return values;
}
