import { conformance } from "../../unix/test/conformance/suite.js";
import { simulated } from "../src/index.js";

conformance("sim", simulated());
