// serve and fetch on the libuv backend: Node's server listens itself, fetch is Node's (undici).
import { libuv } from "@bobbin/unix";
import { serveSuite } from "./support/suite.js";

serveSuite({ name: "libuv", backend: libuv, systemSockets: true });
