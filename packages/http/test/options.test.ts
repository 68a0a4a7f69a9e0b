// serve's options are checked before anything listens: an unknown key is a mistake, not ignored.
import { describe, expect, it } from "vitest";
import { serve } from "../src/index.js";

describe("serve's options", () => {
  const handler = function* () {};

  it("refuses an unknown option, naming it and the options there are", () => {
    expect(() => serve({ port: 0, timeout: 3 } as never, handler)).toThrow(TypeError);
    expect(() => serve({ port: 0, timeout: 3 } as never, handler)).toThrow(
      'serve(options, handler): unknown option "timeout"; the options are host, port, onListening, deadline, limit, grace, onError, bodyLimit, node',
    );
  });

  it("takes every option it documents, an explicit undefined meaning the default", () => {
    const every = {
      host: "127.0.0.1",
      port: 0,
      onListening: () => {},
      deadline: 1,
      limit: 1,
      grace: 1,
      onError: () => {},
      bodyLimit: 1,
      node: {},
    };
    expect(() => serve(every, handler)).not.toThrow();
    const unset = Object.fromEntries(Object.keys(every).map((key) => [key, undefined]));
    expect(() => serve({ ...unset, port: 0 }, handler)).not.toThrow();
  });
});
