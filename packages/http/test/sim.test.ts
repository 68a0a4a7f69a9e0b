// serve and fetch in @bobbin/sim: a simulated network and virtual time; fetch goes over the
// simulated network (Node's http.request over a toStream stream).
import { simulated } from "@bobbin/sim";
import { serveSuite } from "./support/suite.js";

serveSuite({ name: "sim", backend: simulated({ seed: 1 }), systemSockets: false });
