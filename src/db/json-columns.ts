// Columns that hold a JSON array of strings (papers.authors, papers.categories).

/** The strings of a JSON array column; anything unreadable or not a string reads as absent (never throws). */
export function parseStringArray(json: string): string[] {
  try {
    const v: unknown = JSON.parse(json);
    return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
  } catch {
    return [];
  }
}
