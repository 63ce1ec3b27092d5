// Refused: nothing was done, and the one line of its message says why (the CLI's exit code 2, without the usage).
export class Refused extends Error {}
