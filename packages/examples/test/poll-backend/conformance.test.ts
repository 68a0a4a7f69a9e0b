// The backend conformance suite of @bobbin/unix, through its published
// export, on the poll backend: what a third-party backend's package runs.
import { conformance } from "@bobbin/unix/conformance";
import { pollBackend } from "../../src/poll-backend/backend.js";

conformance("poll", pollBackend, {
  // the fd-exhaustion test runs the backend in a child process: the built module
  childProcess: { module: new URL("../../dist/poll-backend/backend.js", import.meta.url).href, export: "pollBackend" },
});
