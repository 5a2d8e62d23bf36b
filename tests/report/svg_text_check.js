// Run in a page that holds the report's SVGs inline, each in a <div id=NAME>:
// every text (a group of glyphs in the ink colour: labels, titles, ticks,
// keys; markers are drawn in their series' colours) must lie inside its image
// and no two may overlap. The verdict goes into <body data-problems, data-report>.
(function () {
  var out = [], texts = 0;
  document.querySelectorAll('div > svg').forEach(function (svg) {
    var name = svg.parentNode.id, vb = svg.viewBox.baseVal, boxes = [];
    svg.querySelectorAll('g').forEach(function (g) {
      if (g.closest('defs') || !g.children.length) return;
      for (var i = 0; i < g.children.length; i++) if (g.children[i].tagName !== 'use') return;
      if ((g.getAttribute('style') || '').indexOf('fill:rgb(11.764706%') < 0) return;
      var b = g.getBBox();
      if (!(b.width > 0)) return;
      boxes.push(b);
      if (b.x < vb.x - 0.5 || b.y < vb.y - 0.5 || b.x + b.width > vb.x + vb.width + 0.5 ||
          b.y + b.height > vb.y + vb.height + 0.5)
        out.push(name + ': text outside the image at ' + Math.round(b.x) + ',' + Math.round(b.y));
    });
    texts += boxes.length;
    // touching is fine; a real overlap is more than a point either way
    for (var i = 0; i < boxes.length; i++)
      for (var j = i + 1; j < boxes.length; j++) {
        var a = boxes[i], c = boxes[j];
        var w = Math.min(a.x + a.width, c.x + c.width) - Math.max(a.x, c.x);
        var h = Math.min(a.y + a.height, c.y + c.height) - Math.max(a.y, c.y);
        if (w > 1 && h > 1)
          out.push(name + ': two texts overlap at ' + Math.round(a.x) + ',' + Math.round(a.y) + ' and ' +
                   Math.round(c.x) + ',' + Math.round(c.y));
      }
  });
  document.body.setAttribute('data-texts', String(texts));
  document.body.setAttribute('data-problems', String(out.length));
  document.body.setAttribute('data-report', out.slice(0, 20).join(' | '));
})();
