// A forgotten yield*, planted: the rule must report line 6, and only it.
import * as U from "@bobbin/unix";

export function* greet(c: U.Socket) {
  yield* U.write(c, "hello ");
  U.write(c, "world");
  yield* U.close(c);
}
