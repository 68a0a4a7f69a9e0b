/** The lines that say how to get the addon, for the package installed in `dir` (see advice.mjs). */
export declare function howToBuild(dir: string): string[];
