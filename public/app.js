// Paper Digest pages: the topic builder (live preview of recent matches, syntax errors inline),
// "add another topic", and time zone detection. The forms work without this file.
(function () {
  'use strict';

  var DEBOUNCE_MS = 300;

  function make(tag, className) {
    var el = document.createElement(tag);
    if (className) el.className = className;
    return el;
  }

  var WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
  var MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

  /** A batch day (YYYY-MM-DD) as an edition reads: "Sun 23 Nov". */
  function dayName(day) {
    var d = new Date(day + 'T00:00:00Z');
    if (isNaN(d.getTime())) return day;
    return WEEKDAYS[d.getUTCDay()] + ' ' + d.getUTCDate() + ' ' + MONTHS[d.getUTCMonth()];
  }

  // --- Live preview of one topic input ---------------------------------------------------------
  function attachPreview(input) {
    var field = input.closest('[data-topic-field]');
    var preview = field.querySelector('[data-topic-preview]');
    var errorEl = field.querySelector('[data-topic-error]');
    var statusEl = field.querySelector('[data-topic-status]');
    var timer = null;
    var controller = null;
    var lastQuery = null;

    function clearError() {
      errorEl.textContent = '';
      input.removeAttribute('aria-invalid');
      field.classList.remove('has-error');
    }

    function showError(message, position) {
      errorEl.textContent = message;
      input.setAttribute('aria-invalid', 'true');
      field.classList.add('has-error');
      statusEl.textContent = '';
      preview.textContent = '';
      if (typeof position === 'number' && position > 0) {
        var caret = make('p', 'caret');
        caret.setAttribute('aria-hidden', 'true');
        var chars = Array.from(input.value);
        caret.textContent = chars.join('') + '\n' + ' '.repeat(Math.min(position - 1, chars.length)) + '^';
        preview.appendChild(caret);
      }
    }

    function showPapers(data) {
      clearError();
      preview.textContent = '';
      statusEl.textContent =
        data.total === 0
          ? 'No paper of the last 14 days matches this topic yet.'
          : data.total === 1
            ? '1 paper of the last 14 days matches:'
            : data.total + ' papers of the last 14 days match' + (data.papers.length < data.total ? '; the first ' + data.papers.length + ':' : ':');
      if (typeof data.perDay === 'number') {
        // Volume before subscribing: what this topic would bring a day (last 30 days, or the days held).
        statusEl.textContent += ' About ' + data.perDay + ' a day ' + (data.from ? 'since ' + dayName(data.from) : 'over the last 30 days') + '.';
      }
      if (data.from) {
        // The server's preview holds only its newest days (PREVIEW_MIRROR_MB): say where its counts begin.
        statusEl.textContent += ' Counted from ' + dayName(data.from) + ', the oldest day this preview holds.';
      }
      if (!data.papers.length) return;
      var list = make('ol');
      data.papers.forEach(function (p) {
        var li = make('li');
        // Titles are text, not links: keyboard users tab straight from one topic to the next.
        var title = make('strong', 'title');
        title.innerHTML = p.titleHtml; // escaped by the server; only <mark> inside
        li.appendChild(title);
        var abs = make('p', 'abstract');
        abs.innerHTML = p.abstractHtml;
        li.appendChild(abs);
        list.appendChild(li);
      });
      preview.appendChild(list);
    }

    function run() {
      var q = input.value.trim();
      if (q === lastQuery) return;
      lastQuery = q;
      if (controller) controller.abort();
      if (q === '') {
        clearError();
        statusEl.textContent = '';
        preview.textContent = '';
        return;
      }
      controller = new AbortController();
      fetch('/api/topics/preview?q=' + encodeURIComponent(q), {
        headers: { accept: 'application/json' },
        signal: controller.signal,
      })
        .then(function (res) {
          return res.json();
        })
        .then(function (data) {
          if (data.ok) showPapers(data);
          else showError(data.error || 'This topic is not valid.', data.position);
        })
        .catch(function (e) {
          if (e && e.name === 'AbortError') return;
          preview.textContent = '';
          statusEl.textContent = 'The preview is not available right now; you can still save your topics.';
        });
    }

    input.addEventListener('input', function () {
      clearTimeout(timer);
      timer = setTimeout(run, DEBOUNCE_MS);
    });
    // Topics already saved are not previewed on load (the page stays short); editing one previews it.
    lastQuery = input.value.trim();
  }

  // --- "Add another topic" -------------------------------------------------------------------------
  function attachAddButton(form) {
    var button = form.querySelector('[data-add-topic]');
    var list = form.querySelector('[data-topic-list]');
    if (!button || !list) return;
    button.hidden = false;
    button.addEventListener('click', function () {
      var fields = list.querySelectorAll('[data-topic-field]');
      var index = fields.length;
      if (index >= 20) {
        button.disabled = true;
        return;
      }
      var copy = fields[fields.length - 1].cloneNode(true);
      var id = 'topic-' + index;
      copy.classList.remove('has-error');
      copy.querySelector('label').setAttribute('for', id);
      copy.querySelector('label').textContent = 'Topic ' + (index + 1);
      var input = copy.querySelector('[data-topic-input]');
      input.id = id;
      input.value = '';
      input.removeAttribute('aria-invalid');
      input.setAttribute('aria-describedby', id + '-help ' + id + '-status');
      var err = copy.querySelector('[data-topic-error]');
      err.id = id + '-help';
      err.textContent = '';
      var status = copy.querySelector('[data-topic-status]');
      status.id = id + '-status';
      status.textContent = '';
      var prev = copy.querySelector('[data-topic-preview]');
      prev.id = id + '-preview';
      prev.textContent = '';
      var wrapper = fields[0].parentElement.classList.contains('topic-row') ? make('div', 'topic-row') : null;
      if (wrapper) wrapper.appendChild(copy);
      list.appendChild(wrapper || copy);
      attachPreview(input);
      input.focus();
    });
  }

  // --- Time zone detected in the browser, still editable --------------------------------------------
  function detectTimezone(select) {
    var tz;
    try {
      tz = Intl.DateTimeFormat().resolvedOptions().timeZone;
    } catch (e) {
      return;
    }
    var help = document.querySelector('[data-timezone-help]');
    var known = Array.prototype.some.call(select.options, function (o) {
      return o.value === tz;
    });
    if (!tz || !known) return;
    select.value = tz;
    if (help) help.textContent = 'Detected from your browser: ' + tz + '. Change it if it is wrong.';
  }

  document.addEventListener('DOMContentLoaded', function () {
    Array.prototype.forEach.call(document.querySelectorAll('form[data-topic-builder]'), function (form) {
      Array.prototype.forEach.call(form.querySelectorAll('[data-topic-input]'), attachPreview);
      attachAddButton(form);
    });
    var tz = document.querySelector('select[data-timezone][data-detect]');
    if (tz) detectTimezone(tz);
    var error = document.getElementById('form-error');
    if (error) error.focus();
  });
})();
