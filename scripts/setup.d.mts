// Types of what TypeScript code imports from setup.mjs.
/** The command (program, arguments) compiling the open-loop load generator into `out`. */
export function loadGeneratorBuild(out: string): [string, string[]];
