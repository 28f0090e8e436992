/** Typed access to the demo's plain-JS scenario helpers. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
export const { fairShares } = require('../../examples/demo/scenario') as {
  fairShares(capacity: number, demands: { name: string; weight: number; rate: number }[]): Map<string, number>;
};
