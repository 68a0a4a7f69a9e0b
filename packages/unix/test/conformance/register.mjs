// `node --import ./register.mjs`: installs ts-loader.mjs (see there).
import { register } from "node:module";

register(new URL("./ts-loader.mjs", import.meta.url));
