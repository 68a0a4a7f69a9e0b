// serve and fetch on @bobbin/native-poll's epoll backend: its sockets listen and accept, Node's
// server gets each connection as a toStream stream.
import { nativeBackend } from "@bobbin/native-poll";
import { serveSuite } from "./support/suite.js";

serveSuite({ name: "native (epoll)", backend: nativeBackend, systemSockets: true });
