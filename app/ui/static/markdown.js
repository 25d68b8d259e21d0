// A small Markdown renderer for deskmate's answers, safe by construction: the whole text is
// HTML-escaped FIRST, and only then are the few Markdown forms answers use (headings, numbered and
// bulleted lists, code, bold, italics, links, [n] citations) turned into tags this file writes itself.
// Nothing from an answer or a document can become markup, an attribute or a script. Links are only
// http(s) or same-site paths, and open in a new tab without a referrer.
(function () {
  "use strict";

  const ESCAPES = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

  function escapeHtml(text) {
    return String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]);
  }

  // http(s) with a host, or a path on this site; never a control character, a backslash (`/\\host` is
  // read by browsers as `//host`) or a second scheme-relative slash
  const SAFE_URL = /^(https?:\/\/[^\s\\\u0000-\u001f]+|\/(?![\/\\])[^\s\\\u0000-\u001f]*)$/i;

  function link(url, label) {
    // `url` and `label` are already escaped; the scheme check keeps javascript: and data: out
    if (!SAFE_URL.test(url)) return label;
    return `<a href="${url}" target="_blank" rel="noopener noreferrer">${label}</a>`;
  }

  function inline(text, options) {
    // Finished pieces (code, links) are set aside as placeholders, so no later pass — auto-links, bold,
    // italics, [n] citations — can reach into a tag or an attribute this function already wrote.
    const kept = [];
    const keep = (html) => {
      kept.push(html);
      return `\u0001${kept.length - 1}\u0001`;
    };
    let out = text.replace(/`([^`\n]+)`/g, (_, code) => keep(`<code>${code}</code>`));
    out = out.replace(/\[([^\]\n]+)\]\(([^)\s]+)\)/g,
      (whole, label, url) => (SAFE_URL.test(url) ? keep(link(url, label)) : label));
    out = out.replace(/(^|[\s(])(https?:\/\/[^\s<)\u0001]+[^\s<).,;:!?\u0001])/g,
      (_, before, url) => before + keep(link(url, url)));
    out = out.replace(/\*\*([^*\n]+)\*\*/g, "<strong>$1</strong>");
    out = out.replace(/(^|[^*\w])\*([^*\n]+)\*(?![\w*])/g, "$1<em>$2</em>");
    out = out.replace(/(^|[\s(])_([^_\n]+)_(?![\w])/g, "$1<em>$2</em>");
    if (options.cite) {
      out = out.replace(/\[(\d{1,2})\](?![(\w])/g, (whole, n) => options.cite(Number(n)) || whole);
    }
    // a link's label may hold a code piece: two rounds restore everything (a third finds nothing)
    for (let round = 0; round < 3 && out.includes("\u0001"); round += 1) {
      out = out.replace(/\u0001(\d+)\u0001/g, (_, i) => kept[Number(i)]);
    }
    return out;
  }

  const ORDERED = /^\s*(\d{1,3})[.)]\s+(.*)$/;
  const BULLET = /^\s*[-*•]\s+(.*)$/;
  const HEADING = /^(#{1,6})\s+(.*)$/;
  const FENCE = /^\s*```/;
  const QUOTE = /^&gt;\s?(.*)$/;

  function startsBlock(line) {
    return ORDERED.test(line) || BULLET.test(line) || HEADING.test(line) || FENCE.test(line) || QUOTE.test(line);
  }

  /** Markdown → HTML string. options.cite(n) may return the HTML for citation [n] (or null to leave it). */
  function renderMarkdown(source, options) {
    options = options || {};
    // control characters out first: \u0001 marks the pieces `inline` sets aside
    const text = String(source || "").replace(/\r\n?/g, "\n").replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, "");
    const lines = escapeHtml(text).split("\n");
    const html = [];
    let i = 0;
    while (i < lines.length) {
      const line = lines[i];
      if (!line.trim()) { i += 1; continue; }
      if (FENCE.test(line)) {
        const code = [];
        i += 1;
        while (i < lines.length && !FENCE.test(lines[i])) code.push(lines[i++]);
        i += 1;
        html.push(`<pre><code>${code.join("\n")}</code></pre>`);
        continue;
      }
      const heading = HEADING.exec(line);
      if (heading) {
        const level = Math.min(6, heading[1].length + 2); // answers live inside a page: h3 and smaller
        html.push(`<h${level}>${inline(heading[2], options)}</h${level}>`);
        i += 1;
        continue;
      }
      if (ORDERED.test(line) || BULLET.test(line)) {
        const ordered = ORDERED.test(line);
        const pattern = ordered ? ORDERED : BULLET;
        const items = [];
        const start = ordered ? Number(ORDERED.exec(line)[1]) : 1;
        while (i < lines.length && pattern.test(lines[i])) {
          const match = pattern.exec(lines[i]);
          let item = ordered ? match[2] : match[1];
          i += 1;
          // indented continuation lines belong to the item
          while (i < lines.length && /^\s{2,}\S/.test(lines[i]) && !startsBlock(lines[i])) item += " " + lines[i++].trim();
          items.push(`<li>${inline(item, options)}</li>`);
        }
        const tag = ordered ? "ol" : "ul";
        html.push(`<${tag}${ordered && start !== 1 ? ` start="${start}"` : ""}>${items.join("")}</${tag}>`);
        continue;
      }
      if (QUOTE.test(line)) {
        const quoted = [];
        while (i < lines.length && QUOTE.test(lines[i])) quoted.push(inline(QUOTE.exec(lines[i++])[1], options));
        html.push(`<blockquote>${quoted.join("<br>")}</blockquote>`);
        continue;
      }
      const paragraph = [];
      while (i < lines.length && lines[i].trim() && !startsBlock(lines[i])) paragraph.push(inline(lines[i++], options));
      html.push(`<p>${paragraph.join("<br>")}</p>`);
    }
    return html.join("");
  }

  window.DeskmateMarkdown = { renderMarkdown, escapeHtml };
})();
