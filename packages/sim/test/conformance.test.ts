// The backend conformance suite of @bobbin/unix, through its published export, on the simulated
// backend: its own network (no plain Node socket can be a peer) and a virtual clock.
import { conformance } from "@bobbin/unix/conformance";
import { simulated } from "../src/index.js";

conformance("sim", simulated(), { systemSockets: false, clock: "virtual" });
