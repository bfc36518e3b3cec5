"""The error browser's page (:mod:`medfc.tables.errors`): its HTML, style and plain script, one template. The script
draws, from the JSON the page embeds (``<script id="medfc-errors-data">``), the filters, counts, a confusion matrix
per row and the claims or pairs; the ids a test reads: ``f-row``, ``f-gold``, ``f-pred``, ``f-wrong``,
``shown-items``, ``shown-preds``, ``shown-wrong``, ``matrices``, ``list``, and ``data-ready`` on ``<html>``. A Python
module so that editing it reruns the rule (:mod:`medfc.common.codeversion` hashes Python modules).
"""

from __future__ import annotations

STYLE = """
body{font-family:system-ui,sans-serif;margin:0 auto;max-width:80rem;padding:0 1rem 3rem;color:#222}
h1{font-size:1.4rem;margin:1rem 0 .3rem}h2{font-size:1.1rem;margin:1.2rem 0 .4rem}
.note{color:#555;font-size:90%;margin:.2rem 0}
nav button{margin-right:.4rem;padding:.3rem .8rem;border:1px solid #999;background:#f4f4f4;cursor:pointer}
nav button.on{background:#234;color:#fff}
#filters{position:sticky;top:0;background:#fff;padding:.5rem 0;border-bottom:1px solid #ddd;z-index:1}
#filters label{margin-right:1rem;white-space:nowrap}#filters select{max-width:22rem}
#counts{margin:.3rem 0 0;font-size:95%}#counts b{font-variant-numeric:tabular-nums}
#matrices{display:flex;flex-wrap:wrap;gap:.8rem}
.matrix{border:1px solid #ddd;padding:.3rem .5rem;font-size:85%;margin:0}
.matrix caption{text-align:left;font-weight:600;padding-bottom:.2rem}
.matrix table{border-collapse:collapse}.matrix th,.matrix td{border:1px solid #ccc;padding:1px 5px;text-align:right}
.matrix th{background:#f4f4f4;font-weight:500}.matrix td{cursor:pointer}
.matrix td.hit{background:#e3f3e3}.matrix td.miss{background:#fbe3e3}.matrix td.zero{color:#bbb}
.item{border:1px solid #ccc;border-radius:4px;margin:.6rem 0;padding:.4rem .7rem}
.item header{display:flex;gap:1rem;align-items:baseline;font-size:90%;color:#555}
.claim{font-size:105%;margin:.3rem 0}.claim .lang{color:#777;font-size:80%;margin-right:.3rem}
.lab{display:inline-block;padding:0 .35rem;border-radius:3px;background:#eef;font-size:90%}
table.preds{border-collapse:collapse;font-size:90%;width:100%;margin:.3rem 0}
table.preds th,table.preds td{border-bottom:1px solid #eee;padding:2px 5px;text-align:left;vertical-align:top}
table.preds td:first-child{width:16rem}table.preds td:nth-child(3),table.preds td:nth-child(4){width:9rem}
tr.wrong td.pred{color:#a00;font-weight:600}tr.right td.pred{color:#070}
.ev ul{margin:0;padding-left:1.1rem}.ev .hit{font-weight:700;color:#070}
.gold-ev{font-size:90%;margin:.2rem 0}.gold-ev ol{margin:.1rem 0;padding-left:2.2rem}
details.doc{font-size:90%;margin:.3rem 0}details.doc summary{cursor:pointer;color:#234}
details.doc ol{padding-left:2.6rem;margin:.3rem 0}
li.gold{background:#fff3c4}li.sel{outline:1px dashed #69c}
.tag{display:inline-block;margin-left:.3rem;padding:0 .25rem;border-radius:3px;background:#cde;font-size:80%}
.tag.g{background:#f2d675}
#pager{margin:.6rem 0}#pager button{margin:0 .3rem}
"""

SCRIPT = r"""
(function () {
  "use strict";
  var DATA = JSON.parse(document.getElementById("medfc-errors-data").textContent);
  var PAGE_SIZE = 50;
  var NONE = -1;  // a prediction without a label (a generative system that scored no option)
  var SCALES = {smoke: "Smoke-sized run (experiments.scale smoke): the predictions show that the pipeline runs, nothing about the models.",
                cpu: "CPU recipe on real data (experiments.scale cpu).", paper: "The papers' models and settings (experiments.scale paper)."};
  var state = {ds: 0, row: "", gold: "", pred: "", wrong: false, page: 0};
  var flat = [];
  function $(id) { return document.getElementById(id); }
  function el(tag, cls, text) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function ds() { return DATA.datasets[state.ds]; }
  function labelName(i) { return i === NONE ? "(no prediction)" : ds().labels[i]; }
  function rowTag(r) { return "R" + (r + 1); }
  function option(select, value, text) { var o = el("option", null, text); o.value = value; select.appendChild(o); }

  function flatten() {
    flat = [];
    ds().rows.forEach(function (row, r) {
      row.preds.forEach(function (p) {
        flat.push({row: r, item: p[0], gold: p[1], pred: p[2] === null ? NONE : p[2], prob: p[3], fold: p[4], ids: p[5], texts: p[6]});
      });
    });
  }
  function matches(p, ignoreClasses) {
    if (state.row !== "" && p.row !== +state.row) return false;
    if (ignoreClasses) return true;
    if (state.gold !== "" && p.gold !== +state.gold) return false;
    if (state.pred !== "" && p.pred !== +state.pred) return false;
    return !(state.wrong && p.gold === p.pred);
  }

  function buildControls() {
    var d = ds(), sRow = $("f-row"), sGold = $("f-gold"), sPred = $("f-pred");
    [sRow, sGold, sPred].forEach(function (s) { s.textContent = ""; });
    option(sRow, "", "all rows (" + d.rows.length + ")");
    d.rows.forEach(function (row, r) { option(sRow, String(r), rowTag(r) + " " + row.name); });
    option(sGold, "", "any");
    option(sPred, "", "any");
    d.labels.forEach(function (label, i) { option(sGold, String(i), label); option(sPred, String(i), label); });
    if (flat.some(function (p) { return p.pred === NONE; })) option(sPred, String(NONE), "(no prediction)");
    syncControls();
    $("unit").textContent = d.unit + "s";
    var nav = $("datasets");
    Array.prototype.forEach.call(nav.children, function (b, i) { b.className = i === state.ds ? "on" : ""; });
  }
  function syncControls() {
    $("f-row").value = state.row; $("f-gold").value = state.gold; $("f-pred").value = state.pred; $("f-wrong").checked = state.wrong;
  }

  function drawMatrices() {
    var d = ds(), box = $("matrices");
    box.textContent = "";
    d.rows.forEach(function (row, r) {
      if (state.row !== "" && r !== +state.row) return;
      var counts = {}, n = 0, right = 0, hasNone = false;
      flat.forEach(function (p) {
        if (p.row !== r) return;
        var k = p.gold + "," + p.pred;
        counts[k] = (counts[k] || 0) + 1;
        n += 1; if (p.gold === p.pred) right += 1; if (p.pred === NONE) hasNone = true;
      });
      var cols = row.labels.slice();
      if (hasNone) cols.push(NONE);
      var fig = el("figure", "matrix"), table = el("table"), head = el("tr");
      fig.setAttribute("data-row", String(r));
      var cap = el("caption", null, rowTag(r) + " " + row.name + ": n = " + n + ", accuracy " + (n ? (100 * right / n).toFixed(1) : "0.0") + "%");
      table.appendChild(cap);
      head.appendChild(el("th", null, "gold \u2193 / predicted \u2192"));
      cols.forEach(function (c) { head.appendChild(el("th", null, labelName(c))); });
      table.appendChild(head);
      row.labels.forEach(function (g) {
        var tr = el("tr");
        tr.appendChild(el("th", null, labelName(g)));
        cols.forEach(function (c) {
          var v = counts[g + "," + c] || 0;
          var td = el("td", v === 0 ? "zero" : (g === c ? "hit" : "miss"), v);
          td.setAttribute("data-gold", String(g)); td.setAttribute("data-pred", String(c));
          td.title = "show " + labelName(g) + " predicted as " + labelName(c) + " by " + rowTag(r);
          td.addEventListener("click", function () {
            state.row = String(r); state.gold = String(g); state.pred = String(c); state.wrong = false; state.page = 0;
            syncControls(); update();
          });
          tr.appendChild(td);
        });
        table.appendChild(tr);
      });
      fig.appendChild(table);
      box.appendChild(fig);
    });
  }

  function evidenceCell(p, item) {
    var td = el("td", "ev");
    if (p.ids) {
      var gold = item.gold || [], span = el("span");
      p.ids.forEach(function (i, k) {
        if (k) span.appendChild(document.createTextNode(", "));
        span.appendChild(el("span", gold.indexOf(i) >= 0 ? "hit" : null, i));
      });
      var hits = p.ids.filter(function (i) { return gold.indexOf(i) >= 0; }).length;
      td.appendChild(document.createTextNode("sentences "));
      td.appendChild(span);
      td.appendChild(document.createTextNode(" (" + hits + " of " + gold.length + " gold)"));
    } else if (p.texts) {
      var more = el("details"), ul = el("ul");
      more.appendChild(el("summary", null, p.texts.length + (p.texts.length === 1 ? " text shown: " : " texts shown: ") + DATA.texts[p.texts[0]].slice(0, 60) + "\u2026"));
      p.texts.forEach(function (t) { ul.appendChild(el("li", null, DATA.texts[t])); });
      more.appendChild(ul);
      td.appendChild(more);
    } else {
      td.textContent = ds().kind === "abstract" ? "the whole abstract" : "none";
    }
    return td;
  }

  function langsOf(preds) {
    var d = ds(), langs = [];
    preds.forEach(function (p) { var l = d.rows[p.row].lang || ""; if (langs.indexOf(l) < 0) langs.push(l); });
    return langs.length ? langs : [d.langs[0]];
  }

  function drawDoc(details, item, preds, langs) {
    var d = ds(), doc = d.docs[item.doc];
    if (d.kind === "abstract") { details.appendChild(el("p", null, doc.text)); return; }
    langs.forEach(function (lang) {
      var sentences = doc.sentences[lang] || [];
      if (langs.length > 1) details.appendChild(el("div", "lang", lang));
      var ol = el("ol");
      ol.setAttribute("start", "0");
      sentences.forEach(function (s, i) {
        var gold = (item.gold || []).indexOf(i) >= 0;
        var by = preds.filter(function (p) { return p.ids && p.ids.indexOf(i) >= 0 && (d.rows[p.row].lang || "") === lang; });
        var li = el("li", (gold ? "gold" : "") + (by.length ? " sel" : ""), s);
        li.value = i;
        if (gold) li.appendChild(el("span", "tag g", "gold"));
        by.forEach(function (p) { var t = el("span", "tag", rowTag(p.row)); t.title = d.rows[p.row].name; li.appendChild(t); });
        ol.appendChild(li);
      });
      details.appendChild(ol);
    });
  }

  function card(itemIndex, preds) {
    var d = ds(), item = d.items[itemIndex], box = el("article", "item"), langs = langsOf(preds);
    box.setAttribute("data-item", item.id);
    var head = el("header");
    head.appendChild(el("span", "uid", item.id));
    var gl = el("span", null, "gold: ");
    gl.appendChild(el("span", "lab", item.label));
    head.appendChild(gl);
    box.appendChild(head);
    langs.forEach(function (lang) {
      var p = el("p", "claim");
      if (langs.length > 1) p.appendChild(el("span", "lang", lang));
      p.appendChild(document.createTextNode(item.text[lang] || ""));
      box.appendChild(p);
    });
    var table = el("table", "preds"), hr = el("tr");
    ["row", "fold", "gold", "predicted", "p", d.kind === "abstract" ? "evidence read" : "selected or shown evidence"].forEach(function (h) {
      hr.appendChild(el("th", null, h));
    });
    table.appendChild(hr);
    preds.forEach(function (p) {
      var tr = el("tr", p.gold === p.pred ? "right" : "wrong");
      tr.setAttribute("data-row", String(p.row));
      tr.appendChild(el("td", null, rowTag(p.row) + " " + d.rows[p.row].name));
      tr.appendChild(el("td", null, p.fold === null ? "" : p.fold));
      tr.appendChild(el("td", null, labelName(p.gold)));
      tr.appendChild(el("td", "pred", labelName(p.pred)));
      tr.appendChild(el("td", null, p.prob === null ? "" : p.prob.toFixed(3)));
      tr.appendChild(evidenceCell(p, item));
      table.appendChild(tr);
    });
    box.appendChild(table);
    var doc = d.docs[item.doc];
    if (d.kind === "article") {
      var gold = el("div", "gold-ev"), sentences = doc.sentences[langs[0]] || [];
      gold.appendChild(el("span", null, item.gold.length ? "Gold evidence (sentences " + item.gold.join(", ") + "):" : "No gold evidence sentences."));
      if (item.gold.length) {
        var ol = el("ol");
        item.gold.forEach(function (i) { var li = el("li", null, sentences[i] === undefined ? "(sentence " + i + " not in the article)" : sentences[i]); li.value = i; ol.appendChild(li); });
        gold.appendChild(ol);
      }
      box.appendChild(gold);
    }
    var details = el("details", "doc");
    details.appendChild(el("summary", null, d.kind === "article"
      ? "Article: " + doc.title + " (" + (doc.sentences[langs[0]] || []).length + " sentences; gold and each row's selected sentences marked)"
      : "Gold evidence, the abstract: " + doc.title));
    details.addEventListener("toggle", function () {
      if (details.open && details.children.length === 1) drawDoc(details, item, preds, langs);
    });
    box.appendChild(details);
    return box;
  }

  function update() {
    var selected = flat.filter(function (p) { return matches(p, false); });
    var byItem = {}, order = [];
    selected.forEach(function (p) {
      if (!byItem[p.item]) { byItem[p.item] = []; order.push(p.item); }
      byItem[p.item].push(p);
    });
    order.sort(function (a, b) { return a - b; });
    var wrong = selected.filter(function (p) { return p.gold !== p.pred; }).length;
    $("shown-items").textContent = order.length;
    $("shown-preds").textContent = selected.length;
    $("shown-wrong").textContent = wrong;
    var pages = Math.max(1, Math.ceil(order.length / PAGE_SIZE));
    state.page = Math.min(state.page, pages - 1);
    $("page-no").textContent = "page " + (state.page + 1) + " of " + pages;
    $("prev").disabled = state.page === 0;
    $("next").disabled = state.page >= pages - 1;
    var list = $("list");
    list.textContent = "";
    order.slice(state.page * PAGE_SIZE, (state.page + 1) * PAGE_SIZE).forEach(function (i) { list.appendChild(card(i, byItem[i])); });
    drawMatrices();
  }

  function choose(dsIndex) {
    state = {ds: dsIndex, row: "", gold: "", pred: "", wrong: false, page: 0};
    flatten(); buildControls(); update();
  }

  function init() {
    var nav = $("datasets");
    $("scale").textContent = SCALES[DATA.scale] || "";
    if (!DATA.datasets.length) { $("list").textContent = "This run made no predictions."; return; }
    DATA.datasets.forEach(function (d, i) {
      var b = el("button", null, d.title);
      b.type = "button";
      b.setAttribute("data-dataset", d.key);
      b.addEventListener("click", function () { choose(i); });
      nav.appendChild(b);
    });
    ["row", "gold", "pred"].forEach(function (k) {
      $("f-" + k).addEventListener("change", function (e) { state[k] = e.target.value; state.page = 0; update(); });
    });
    $("f-wrong").addEventListener("change", function (e) { state.wrong = e.target.checked; state.page = 0; update(); });
    $("prev").addEventListener("click", function () { state.page -= 1; update(); window.scrollTo(0, 0); });
    $("next").addEventListener("click", function () { state.page += 1; update(); window.scrollTo(0, 0); });
    choose(0);
  }

  init();
  document.documentElement.setAttribute("data-ready", "1");
})();
"""

PAGE_TEMPLATE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>@TITLE@</title><style>""" + STYLE + """</style></head>
<body>
<h1>@TITLE@</h1>
<p class="note">Every test claim (HealthFC) or test pair (CliniFact) with what each row of the run predicted. A row is a model and
system (HealthFC: and language, over its test folds). Filter by row, gold class and predicted class; a confusion-matrix
cell shows its predictions.</p>
<p class="note" id="scale"></p>
<noscript><p>This page needs JavaScript (it loads nothing from the network).</p></noscript>
<nav id="datasets"></nav>
<div id="filters">
<label>row <select id="f-row"></select></label>
<label>gold <select id="f-gold"></select></label>
<label>predicted <select id="f-pred"></select></label>
<label><input type="checkbox" id="f-wrong"> wrong only</label>
<p id="counts">shown: <b id="shown-items">0</b> <span id="unit">claims</span>, <b id="shown-preds">0</b> predictions,
<b id="shown-wrong">0</b> of them wrong</p>
</div>
<h2>Confusion matrices</h2>
<div id="matrices"></div>
<h2>Predictions</h2>
<div id="pager"><button type="button" id="prev">&larr; previous</button><span id="page-no"></span><button type="button" id="next">next &rarr;</button></div>
<div id="list"></div>
<script id="medfc-errors-data" type="application/json">@DATA@</script>
<script>""" + SCRIPT + """</script>
</body></html>
"""
