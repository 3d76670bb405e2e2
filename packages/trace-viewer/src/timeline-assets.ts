/** A row's height in pixels: `--row` in the style, and the height of a chunk of rows. */
export const ROW_PX = 24;

/**
 * The page's inline style. Statuses are told by an icon and a word on every row and by a
 * pattern on the bar; colour only repeats them.
 */
export const TIMELINE_CSS = `
:root{--label:300px;--row:${ROW_PX}px;--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--run:#2f6fdb;--model:#7a4bc2;--bad:#c62828;--warn:#b35900;--grey:#6e7781}
*{box-sizing:border-box}
body{margin:0;font:13px/1.35 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:#fff}
header{padding:12px 16px;border-bottom:1px solid var(--line)}
h1{font-size:17px;margin:0 0 4px}
.summary{color:var(--muted);margin:0}
.legend{display:flex;flex-wrap:wrap;gap:6px 16px;margin:8px 0 0;padding:0;list-style:none;color:var(--muted)}
.legend li{display:flex;align-items:center;gap:6px}
.swatch{display:inline-block;width:28px;height:12px;position:relative;border-radius:2px}
.help{color:var(--muted);margin:6px 0 0}
.axis{position:sticky;top:0;z-index:3;display:grid;grid-template-columns:var(--label) 1fr;background:#fff;border-bottom:1px solid var(--line)}
.axis .ticks{position:relative;height:22px;margin-right:24px}
.tick{position:absolute;top:4px;font-size:11px;color:var(--muted);transform:translateX(-50%);white-space:nowrap}
main{padding:0 0 16px}
footer{padding:8px 16px 40px;border-top:1px solid var(--line)}
a{color:var(--run)}
a:focus-visible{outline:3px solid #0b0b0b;outline-offset:2px}
.chunk{content-visibility:auto}
.row{display:flex;height:var(--row)}
.row:hover{background:#f6f8fa}
.label{width:var(--label);flex:none;line-height:18px;padding:3px 8px 3px calc(8px + var(--depth,0) * 16px);white-space:nowrap;overflow:hidden;text-overflow:ellipsis;border-right:1px solid var(--line)}
.label .id{color:var(--muted);font-size:11px}
.label .st{font-size:11px;margin-left:4px}
.track{position:relative;flex:1;margin-right:24px}
main{position:relative}
main::before{content:"";position:absolute;top:0;bottom:0;left:var(--label);right:24px;background-image:repeating-linear-gradient(to right,#e3e8ee 0 1px,transparent 1px var(--grid,10%));pointer-events:none}
.run-head{background:#f0f3f6;border-top:1px solid var(--line)}
.run-head .label{font-weight:600}
.turn-head .label{color:var(--muted);font-size:12px}
.batch-head .label{font-size:12px;color:var(--muted)}
.nested{box-shadow:inset 3px 0 0 #9db8e8}
.span{position:absolute;top:10px;height:4px;background:#8c959f;border-radius:2px}
.marker{position:absolute;top:2px;font-size:13px;transform:translateX(-50%)}
.bar{position:absolute;top:4px;height:16px;min-width:3px;border-radius:2px;outline-offset:2px;cursor:default;display:flex}
.bar:focus{outline:3px solid #0b0b0b;z-index:2}
.bar:focus-visible{outline:3px solid #0b0b0b}
.seg{position:absolute;top:0;bottom:0;min-width:2px}
.wait{background:repeating-linear-gradient(135deg,#c9d1d9 0 3px,#fff 3px 6px);border:1px solid #8c959f}
.run{background:var(--run)}
.late{background:repeating-linear-gradient(90deg,var(--warn) 0 2px,transparent 2px 5px);border-top:1px dotted var(--warn);border-bottom:1px dotted var(--warn)}
.s-failed .run{background:repeating-linear-gradient(45deg,var(--bad) 0 4px,#e57373 4px 8px)}
.s-timed_out .run{background:repeating-linear-gradient(0deg,var(--warn) 0 3px,#f0a45a 3px 6px)}
.s-cancelled .run,.s-abandoned .run{background:repeating-radial-gradient(circle at 2px 2px,var(--grey) 0 1.5px,#c9d1d9 1.5px 4px)}
.s-refused .wait,.s-policy_error .wait,.s-denied .wait,.s-invalid_input .wait,.s-unknown_tool .wait,.s-cancelled .wait{background:repeating-linear-gradient(45deg,#f3c1c1 0 2px,#fff 2px 5px),repeating-linear-gradient(-45deg,#f3c1c1 0 2px,transparent 2px 5px);border:1px dashed var(--bad)}
.model .run{background:var(--model)}
.model.failed .run{background:repeating-linear-gradient(45deg,var(--bad) 0 4px,#e57373 4px 8px)}
.retry{position:absolute;top:-3px;font-size:11px;transform:translateX(-50%);color:#000;background:#fff;border:1px solid var(--warn);border-radius:6px;padding:0 2px;line-height:12px}
.bar>i{font-style:normal;position:absolute;left:calc(100% + 3px);top:0;font-size:11px;line-height:16px;white-space:nowrap;pointer-events:none}
#tip{position:fixed;z-index:10;max-width:420px;padding:8px 10px;background:#1b1f24;color:#fff;border-radius:6px;font-size:12px;pointer-events:none;box-shadow:0 4px 12px rgba(0,0,0,.25)}
#tip[hidden]{display:none}
.sr{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
#tip dl{display:grid;grid-template-columns:auto 1fr;gap:1px 10px;margin:0}
#tip dt{color:#b6c2cf}
#tip dd{margin:0}
#tip b{display:block;margin-bottom:4px;font-size:13px}
@media (prefers-reduced-motion:no-preference){.bar{transition:outline-offset .1s}}
`;

/**
 * The page's inline script: one shared tooltip filled from the focused or hovered bar's
 * `data-*` fields (as text, never as HTML), and a roving tab stop moved by the arrow keys.
 */
export const TIMELINE_SCRIPT = `
(function(){
  var tip=document.getElementById("tip");
  var bars=document.querySelectorAll(".bar");
  // The bars' details are parsed when first shown, not while the page loads.
  var tips=null;
  var current=0;
  var FIELDS=[["tool","Tool"],["id","Call id"],["turn","Turn"],["queued","Queued"],["started","Started"],["finished","Finished"],["wait","Queue wait"],["duration","Duration"],["status","Status"],["why","Why it waited"],["inflight","In flight"],["late","Settled late"],["detail","Detail"]];
  function show(bar){
    if(tips===null)tips=JSON.parse(document.getElementById("tips").textContent||"[]");
    var d=tips[Number(bar.getAttribute("data-n"))]||{};
    tip.textContent="";
    var title=document.createElement("b");
    title.textContent=d.title||"";
    tip.appendChild(title);
    var list=document.createElement("dl");
    for(var i=0;i<FIELDS.length;i++){
      var value=d[FIELDS[i][0]];
      if(value===undefined||value==="")continue;
      var dt=document.createElement("dt");dt.textContent=FIELDS[i][1];
      var dd=document.createElement("dd");dd.textContent=value;dd.setAttribute("data-field",FIELDS[i][0]);
      list.appendChild(dt);list.appendChild(dd);
    }
    tip.appendChild(list);
    tip.hidden=false;
    var box=bar.getBoundingClientRect();
    var width=tip.offsetWidth,height=tip.offsetHeight;
    var left=Math.min(Math.max(4,box.left),window.innerWidth-width-4);
    var top=box.bottom+6;
    if(top+height>window.innerHeight-4)top=Math.max(4,box.top-height-6);
    tip.style.left=left+"px";tip.style.top=top+"px";
  }
  function hide(){tip.hidden=true;}
  function barOf(target){return target&&target.closest?target.closest(".bar"):null;}
  function move(to){
    if(bars.length===0)return;
    to=Math.max(0,Math.min(bars.length-1,to));
    bars[current].removeAttribute("tabindex");
    current=to;
    var bar=bars[current];
    bar.tabIndex=0;
    bar.focus();
    bar.scrollIntoView({block:"nearest",inline:"nearest"});
  }
  document.addEventListener("pointerover",function(event){var bar=barOf(event.target);if(bar)show(bar);});
  document.addEventListener("pointerout",function(event){var bar=barOf(event.target);if(bar&&bar!==document.activeElement)hide();});
  document.addEventListener("focusin",function(event){
    var bar=barOf(event.target);
    if(!bar)return;
    var at=Number(bar.getAttribute("data-n"));
    if(at!==current&&bars[current]){bars[current].removeAttribute("tabindex");current=at;bar.tabIndex=0;}
    show(bar);
  });
  document.addEventListener("focusout",hide);
  var skip=document.getElementById("skip"),back=document.getElementById("back");
  // Tab into and out of the chart is done here: the browser's own search for the next tab
  // stop visits every row, and lays out each off-screen chunk it passes (a second or more on
  // a 10,000-call page). The order is the page's: skip link, the chart (one tab stop), back
  // link; from nothing focused, Tab enters the chart and Shift+Tab the back link; from either
  // link outwards the browser goes on as usual.
  function tab(event){
    var active=document.activeElement,onBar=barOf(active)!==null,nothing=active===null||active===document.body||active===document.documentElement;
    var to=null;
    if(event.shiftKey){
      if(onBar)to=skip;
      else if(active===back)to="chart";
      else if(nothing)to=back;
    }else if(onBar)to=back;
    else if(active===skip||nothing)to="chart";
    if(to===null||(to==="chart"&&bars.length===0))return;
    event.preventDefault();
    if(to==="chart")move(current);else to.focus();
  }
  document.addEventListener("keydown",function(event){
    if(event.key==="Escape"){hide();return;}
    if(event.key==="Tab"&&!event.altKey&&!event.ctrlKey&&!event.metaKey){tab(event);return;}
    if(!barOf(event.target))return;
    var step={ArrowDown:1,ArrowRight:1,ArrowUp:-1,ArrowLeft:-1,PageDown:20,PageUp:-20}[event.key];
    if(step!==undefined){event.preventDefault();move(current+step);}
    else if(event.key==="Home"){event.preventDefault();move(0);}
    else if(event.key==="End"){event.preventDefault();move(bars.length-1);}
  });
})();
`;
