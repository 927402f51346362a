// The part of libmime's public API we use (the package ships no types).
declare module 'libmime' {
  interface Libmime {
    /** Encodes all of `value` as RFC 2047 encoded words. */
    encodeWord(value: string, mimeWordEncoding?: 'Q' | 'B', maxLength?: number): string;
    /** Folds a header line at whitespace to `lineLength` (continuation lines start with the whitespace). */
    foldLines(str: string, lineLength?: number, afterSpace?: boolean): string;
  }
  const libmime: Libmime;
  export default libmime;
}
