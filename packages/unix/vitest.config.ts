import { packageTests } from "../../vitest.projects.js";

// Signal tests send signals to the test process itself: one process per file.
export default packageTests({ name: "unix", sources: ["core", "sync", "unix"], pool: "forks" });
