import { packageTests } from "../../vitest.projects.js";

export default packageTests({ name: "sync", sources: ["core"] });
