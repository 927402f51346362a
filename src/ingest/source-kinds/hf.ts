// Hugging Face Daily Papers, one day at a time (HF_API_URL?date=YYYY-MM-DD). A day's listing grows while
// the day lasts, so a day is fetched again until 12 hours after it ended.
import { httpUrl } from '../../settings.ts';
import { parseFeed } from '../detect.ts';
import { fetchText } from '../fetch.ts';
import { defineSourceKind, httpError, snippet } from './kind.ts';

const HOUR = 3_600_000;
/** A Hugging Face day fetched less than this after it ended may still grow: it is fetched again. */
export const HF_SETTLE_MS = 12 * HOUR;

/** How Hugging Face refuses a day that has not come (for today or later only; for a past day they are errors). */
const NOT_YET_STATUSES = new Set([400, 404, 422]);

export const hfSource = defineSourceKind({
  name: 'hf',
  title: 'Hugging Face Daily Papers',
  categories: false,
  settings: { HF_API_URL: httpUrl.default('https://huggingface.co/api/daily_papers') },
  schedule: { kind: 'dated', lastDay: 0, settleMs: HF_SETTLE_MS, refreshMs: 0 },
  async fetchDay({ spec, today, settings, fetch }, day) {
    const url = `${settings.HF_API_URL}?date=${day}`;
    const r = await fetchText(url, fetch);
    if (NOT_YET_STATUSES.has(r.status) && day >= today) return { outcome: 'not-yet', day, detail: `HTTP ${r.status}: ${snippet(r.text)}` };
    if (r.status < 200 || r.status >= 300) throw httpError(url, r.status, r.text);
    const batch = parseFeed(r.text, 'hf', { source: spec.name, date: day });
    return batch.papers.length === 0 ? { outcome: 'empty', day, detail: 'no papers listed' } : { outcome: 'papers', day, papers: batch.papers };
  },
});
