// c3lab report: zoom and pan of the timelines. Without it the page shows
// every timeline whole.
(function () {
  "use strict";
  var NS = "http://www.w3.org/2000/svg";
  function nice(lo, hi, n) {
    var raw = (hi - lo) / n, p = Math.pow(10, Math.floor(Math.log10(raw))), step = p;
    var ms = [1, 2, 5, 10];
    for (var i = 0; i < ms.length; i++) { step = ms[i] * p; if (step >= raw) break; }
    var out = [];
    for (var v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Math.round(v / step) * step);
    return out;
  }
  function fmt(ns, span) {
    function t(v) { return String(Math.round(v * 1000) / 1000); }
    if (span >= 5e8) return t(ns / 1e9) + " s";
    if (span >= 5e5) return t(ns / 1e6) + " ms";
    if (span >= 500) return t(ns / 1e3) + " µs";
    return t(ns) + " ns";
  }
  var views = {};
  Array.prototype.forEach.call(document.querySelectorAll("svg.timeline"), function (svg) {
    var L = +svg.getAttribute("data-labelw"), W = +svg.getAttribute("data-plotw");
    var D = +svg.getAttribute("data-dur"), AY = +svg.getAttribute("data-axisy");
    var rects = svg.querySelectorAll("rect.span"), ticks = svg.querySelector("g.ticks");
    var v = { a: 0, b: D };
    function draw() {
      var k = W / (v.b - v.a);
      Array.prototype.forEach.call(rects, function (r) {
        var x1 = L + (+r.getAttribute("data-s") - v.a) * k, x2 = L + (+r.getAttribute("data-e") - v.a) * k;
        r.setAttribute("x", x1.toFixed(2));
        r.setAttribute("width", Math.max(x2 - x1, 0.5).toFixed(2));
      });
      while (ticks.firstChild) ticks.removeChild(ticks.firstChild);
      nice(v.a, v.b, 8).forEach(function (t) {
        var x = (L + (t - v.a) * k).toFixed(2);
        var ln = document.createElementNS(NS, "line");
        ln.setAttribute("x1", x); ln.setAttribute("x2", x); ln.setAttribute("y1", 0); ln.setAttribute("y2", AY);
        ln.setAttribute("stroke", "#0000001a");
        var tx = document.createElementNS(NS, "text");
        tx.setAttribute("x", x); tx.setAttribute("y", AY); tx.setAttribute("dy", 14); tx.setAttribute("text-anchor", "middle");
        tx.textContent = fmt(t, v.b - v.a);
        ticks.appendChild(ln); ticks.appendChild(tx);
      });
    }
    function zoom(f, at) {
      var span = Math.min(Math.max((v.b - v.a) * f, D / 1e5), D);
      var a = at - (at - v.a) * span / (v.b - v.a);
      a = Math.min(Math.max(a, 0), D - span);
      v.a = a; v.b = a + span; draw();
    }
    function timeAt(ev) {
      var m = svg.getScreenCTM();
      var x = m ? (ev.clientX - m.e) / m.a : L + W / 2;
      return v.a + (Math.min(Math.max(x, L), L + W) - L) / W * (v.b - v.a);
    }
    svg.addEventListener("wheel", function (ev) { ev.preventDefault(); zoom(ev.deltaY < 0 ? 0.8 : 1.25, timeAt(ev)); }, { passive: false });
    var drag = null;
    svg.addEventListener("mousedown", function (ev) { drag = { x: ev.clientX, a: v.a, b: v.b }; svg.classList.add("drag"); });
    window.addEventListener("mouseup", function () { drag = null; svg.classList.remove("drag"); });
    window.addEventListener("mousemove", function (ev) {
      if (!drag) return;
      var m = svg.getScreenCTM(), scale = m ? m.a : 1;
      var dt = -(ev.clientX - drag.x) / scale / W * (drag.b - drag.a);
      var a = Math.min(Math.max(drag.a + dt, 0), D - (drag.b - drag.a));
      v.a = a; v.b = a + (drag.b - drag.a); draw();
    });
    svg.addEventListener("dblclick", function () { v.a = 0; v.b = D; draw(); });
    views[svg.id.replace(/-svg$/, "")] = { zoom: zoom, reset: function () { v.a = 0; v.b = D; draw(); }, mid: function () { return (v.a + v.b) / 2; } };
  });
  Array.prototype.forEach.call(document.querySelectorAll(".tlbar button"), function (btn) {
    btn.addEventListener("click", function () {
      var t = views[btn.getAttribute("data-tl")];
      if (!t) return;
      var act = btn.getAttribute("data-act");
      if (act === "reset") t.reset(); else t.zoom(act === "in" ? 0.5 : 2, t.mid());
    });
  });
  // Tells a checker (the DOM test in headless Chromium) the script ran through.
  document.body.setAttribute("data-script", "ready");
  // And how long the page took to parse and lay out up to here.
  if (window.performance) document.body.setAttribute("data-ready-ms", String(Math.round(performance.now())));
})();
