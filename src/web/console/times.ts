// Times on the console as an operator reads them: in their zone (DIGEST_TZ, the service's own) and
// relative to now ("25 Nov 10:02 CET · 3 h ago"), the exact instant kept in the <time> element's
// datetime and title. Raw ISO timestamps wrapped over several lines on a phone.
import Handlebars from 'handlebars';
import { escapeHtml } from '../../html.ts';

const formats = new Map<string, Intl.DateTimeFormat>();

function formatIn(timeZone: string): Intl.DateTimeFormat {
  let f = formats.get(timeZone);
  if (f === undefined) {
    try {
      f = new Intl.DateTimeFormat('en-GB', { timeZone, day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZoneName: 'short' });
    } catch {
      f = new Intl.DateTimeFormat('en-GB', { timeZone: 'UTC', day: 'numeric', month: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23', timeZoneName: 'short' });
    }
    formats.set(timeZone, f);
  }
  return f;
}

/** "just now", "12 min ago", "3 h ago", "2 d ago", "in 5 h" (a pause that ends later). */
export function relativeTime(at: Date, now: Date): string {
  const s = Math.round((now.getTime() - at.getTime()) / 1000);
  const abs = Math.abs(s);
  if (abs < 60) return 'just now';
  const [n, unit] = abs < 3600 ? [Math.floor(abs / 60), 'min'] : abs < 86_400 ? [Math.floor(abs / 3600), 'h'] : [Math.floor(abs / 86_400), 'd'];
  return s >= 0 ? `${n} ${unit} ago` : `in ${n} ${unit}`;
}

/** "25 Nov, 10:02 CET": the date and time in `timeZone`. */
export function localTimeLabel(at: Date, timeZone: string): string {
  return formatIn(timeZone).format(at).replace(',', '');
}

/**
 * The console's `{{when value}}` helper: a <time> element for an ISO timestamp; anything else (empty,
 * not a date) is written as it is, escaped.
 */
export function whenHelper(timeZone: string, now: () => Date): Handlebars.HelperDelegate {
  return (value: unknown) => {
    const text = value == null ? '' : String(value);
    const at = new Date(text);
    if (text === '' || Number.isNaN(at.getTime())) return escapeHtml(text);
    const iso = at.toISOString();
    return new Handlebars.SafeString(
      `<time datetime="${iso}" title="${iso}">${escapeHtml(localTimeLabel(at, timeZone))} <span class="ago">· ${relativeTime(at, now())}</span></time>`,
    );
  };
}
