// "You may also like": how many papers a digest suggests. The suggestions themselves are chosen by the
// reader's model when their row is planned (model-pass.ts) and read back by the loader (render/view.ts).

/** Suggested papers per digest. */
export const MAX_SUGGESTIONS = 3;
