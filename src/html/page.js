// Sortable table, copy buttons and the page's own check for broken elements.
(function () {
  // Numeric cells carry their number in data-sort; the rest sort as text.
  function key(td) {
    var v = td.getAttribute("data-sort");
    return v !== null ? parseFloat(v) : td.textContent.trim().toLowerCase();
  }
  document.querySelectorAll("table.suite").forEach(function (table) {
    table.querySelectorAll("th").forEach(function (th, col) {
      th.addEventListener("click", function () {
        var asc = th.getAttribute("aria-sort") !== "ascending";
        table.querySelectorAll("th").forEach(function (h) { h.removeAttribute("aria-sort"); });
        th.setAttribute("aria-sort", asc ? "ascending" : "descending");
        var body = table.tBodies[0];
        var rows = Array.prototype.slice.call(body.rows);
        rows.sort(function (a, b) {
          var x = key(a.cells[col]), y = key(b.cells[col]);
          var c = typeof x === typeof y ? (x < y ? -1 : x > y ? 1 : 0) : typeof x === "number" ? -1 : 1;
          return asc ? c : -c;
        });
        rows.forEach(function (r) { body.appendChild(r); });
      });
    });
  });
  document.querySelectorAll("button.copy").forEach(function (b) {
    b.addEventListener("click", function () {
      var text = b.parentNode.querySelector("code").textContent;
      var done = function () { b.textContent = "copied"; setTimeout(function () { b.textContent = "copy"; }, 1200); };
      if (navigator.clipboard) { navigator.clipboard.writeText(text).then(done, function () {}); }
      else {
        var r = document.createRange(); r.selectNodeContents(b.parentNode.querySelector("code"));
        var s = window.getSelection(); s.removeAllRanges(); s.addRange(r); document.execCommand("copy"); done();
      }
    });
  });
  var broken = [];
  document.querySelectorAll("a[href^='#']").forEach(function (a) {
    if (!document.getElementById(a.getAttribute("href").slice(1))) broken.push("link " + a.getAttribute("href"));
  });
  document.querySelectorAll("svg").forEach(function (svg, i) {
    if (svg.closest("details:not([open])")) return;
    var r = svg.getBoundingClientRect();
    if (r.width < 10 || r.height < 10 || svg.childElementCount === 0) broken.push("empty svg #" + i);
  });
  if (!document.querySelector("table.suite tbody tr")) broken.push("no suite rows");
  document.documentElement.setAttribute("data-selfcheck", broken.length ? "broken: " + broken.join("; ") : "ok");
  if (broken.length) {
    var bar = document.getElementById("selfcheck-broken");
    bar.textContent = "This page is broken: " + broken.join("; ");
    bar.style.display = "block";
  }
})();
