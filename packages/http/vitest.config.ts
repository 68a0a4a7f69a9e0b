import { packageTests } from "../../vitest.projects.js";

// Servers and signals: one process per file. The backends of @bobbin/native-poll
// and @bobbin/sim run from source too (the addon must be built).
export default packageTests({ name: "http", sources: ["core", "sync", "unix", "native-poll", "sim"], pool: "forks" });
