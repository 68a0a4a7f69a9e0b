import { packageTests } from "../../vitest.projects.js";

// The addon itself must be built (pnpm --filter @bobbin/native-poll build:native).
export default packageTests({ name: "native-poll", sources: ["core", "sync", "unix"], pool: "forks" });
