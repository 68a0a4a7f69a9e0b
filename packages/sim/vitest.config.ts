import { packageTests } from "../../vitest.projects.js";

// The examples' sources (chapter 8's server) are imported by relative path and
// use core, sync and unix; the vitest helper imports this package by name:
// every package runs from source, as one instance.
export default packageTests({ name: "sim", sources: ["core", "sync", "unix", "sim"], pool: "forks" });
