import { createHash } from "node:crypto";

/** A row's height in pixels: `--row` in the style, and the height of a chunk of rows. */
export const ROW_PX = 24;

/**
 * The page's inline style. Statuses are told by an icon and a word on every row and by a
 * pattern on the bar; colour only repeats them.
 */
export const TIMELINE_CSS = `
:root{--label:300px;--gutter:64px;--track-min:480px;--row:${ROW_PX}px;--fg:#1b1f24;--muted:#57606a;--line:#d0d7de;--run:#2f6fdb;--model:#7a4bc2;--bad:#c62828;--warn:#b35900;--grey:#6e7781}
*{box-sizing:border-box}
body{margin:0;font:13px/1.35 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:var(--fg);background:#fff}
header{padding:12px 16px;border-bottom:1px solid var(--line)}
h1{font-size:17px;margin:0 0 4px}
.summary{color:var(--muted);margin:0}
.legend{display:flex;flex-wrap:wrap;gap:6px 16px;margin:8px 0 0;padding:0;list-style:none;color:var(--muted)}
.legend li{display:flex;align-items:center;gap:6px}
.swatch{display:inline-block;width:28px;height:12px;position:relative;border-radius:2px}
.help{color:var(--muted);margin:6px 0 0;max-width:1100px}
.note{margin:8px 0 0;padding:6px 10px;background:#fff4e5;border:1px solid var(--warn);border-radius:4px;color:var(--fg);max-width:1100px}
.width{white-space:nowrap}
.width input{vertical-align:middle;width:120px}
.model-swatch{background:var(--model)}
.axis,main{min-width:calc(var(--label) + var(--track-min) + var(--gutter))}
.axis{position:sticky;top:0;z-index:3;display:grid;grid-template-columns:var(--label) 1fr;background:#fff;border-bottom:1px solid var(--line)}
.axis .ticks{position:relative;height:22px;min-width:var(--track-min);margin-right:var(--gutter)}
.axis>.label{position:relative;overflow:visible}
.grip{position:absolute;top:0;bottom:0;right:-5px;width:9px;cursor:col-resize;z-index:4}
.grip:hover,.grip.dragging{background:linear-gradient(to right,transparent 3px,var(--run) 3px 6px,transparent 6px)}
#zoombar{grid-column:1/-1;padding:4px 8px;background:#fff8c5;border-top:1px solid var(--line)}
#zoombar[hidden]{display:none}
button{font:inherit;color:inherit}
#unzoom{font-size:12px;margin-left:8px;padding:1px 8px;border:1px solid #8c959f;border-radius:4px;background:#fff;cursor:pointer}
#unzoom:focus-visible,.zoom:focus-visible{outline:3px solid #0b0b0b;outline-offset:1px}
.zoom{margin-left:6px;padding:0 4px;font-size:11px;line-height:15px;border:1px solid var(--line);border-radius:3px;background:#fff;color:var(--muted);cursor:pointer}
.zoom:hover{border-color:var(--run);color:var(--run)}
main.zoomed .chunk:not(.in-zoom),main.zoomed .row:not(.in-zoom){display:none}
.tick{position:absolute;top:4px;font-size:11px;color:var(--muted);transform:translateX(-50%);white-space:nowrap}
main{padding:0 0 16px}
footer{padding:8px 16px 40px;border-top:1px solid var(--line)}
a{color:var(--run)}
a:focus-visible{outline:3px solid #0b0b0b;outline-offset:2px}
.chunk{content-visibility:auto}
.row{display:flex;min-height:var(--row)}
.row:hover{background:#f6f8fa}
.label{width:var(--label);flex:none;line-height:18px;padding:3px 8px 3px calc(8px + var(--depth,0) * 12px);white-space:normal;overflow-wrap:anywhere;border-right:1px solid var(--line)}
.label.wide{width:auto;flex:1;border-right:0}
.label .id{color:var(--muted);font-size:11px}
.label .st{font-size:11px}
.track{position:relative;flex:1;min-width:var(--track-min);margin-right:var(--gutter)}
main{position:relative}
main::before{content:"";position:absolute;top:0;bottom:0;left:var(--label);right:var(--gutter);background-image:repeating-linear-gradient(to right,#e3e8ee 0 1px,transparent 1px var(--grid,10%));pointer-events:none}
.run-head{background:#f0f3f6;border-top:1px solid var(--line)}
.run-head .label{font-weight:600}
.turn-head .label{color:var(--muted);font-size:12px}
.batch-head .label{font-size:12px;color:var(--muted)}
.nested{box-shadow:inset 3px 0 0 #9db8e8}
.span{position:absolute;top:10px;height:4px;background:#8c959f;border-radius:2px}
.marker{position:absolute;top:2px;font-size:13px;transform:translateX(-50%)}
.bar{position:absolute;top:4px;height:16px;min-width:3px;border-radius:2px;outline-offset:2px;cursor:default;display:flex;scroll-margin:72px 0 12px}
.bar.call,.moved{background:repeating-linear-gradient(to right,var(--muted) 0 2px,transparent 2px 4px) center/100% 2px no-repeat}
.bar.norun{min-width:10px}
.bar:focus{outline:3px solid #0b0b0b;z-index:2}
.bar:focus-visible{outline:3px solid #0b0b0b}
.seg{position:absolute;top:0;bottom:0;min-width:2px}
.wait{background:repeating-linear-gradient(135deg,#c9d1d9 0 3px,#fff 3px 6px);box-shadow:inset 0 0 0 1px #8c959f}
.seg.wait{min-width:0}
.run{background:var(--run)}
.late{background:repeating-linear-gradient(90deg,var(--warn) 0 2px,#fff 2px 5px);border-top:1px dotted var(--warn);border-bottom:1px dotted var(--warn)}
.s-failed .run{background:repeating-linear-gradient(45deg,var(--bad) 0 4px,#e57373 4px 8px)}
.s-timed_out .run{background:repeating-linear-gradient(0deg,var(--warn) 0 3px,#f0a45a 3px 6px)}
.s-cancelled .run,.s-abandoned .run{background:repeating-radial-gradient(circle at 2px 2px,var(--grey) 0 1.5px,#c9d1d9 1.5px 4px)}
.s-refused .wait,.s-policy_error .wait,.s-denied .wait,.s-invalid_input .wait,.s-unknown_tool .wait,.s-cancelled .wait{background:repeating-linear-gradient(45deg,#f3c1c1 0 2px,#fff 2px 5px),repeating-linear-gradient(-45deg,#f3c1c1 0 2px,transparent 2px 5px);border:1px dashed var(--bad);box-shadow:none}
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
 * The page's inline script: one shared tooltip filled from the focused or hovered bar's details
 * (as text, never as HTML); a roving tab stop moved by the arrow keys; zooming into a turn (its
 * rows alone, on an axis of the turn's own time) and back; and the label column's width. It is
 * the page's only script, allowed by its hash, and it adds every handler with
 * `addEventListener`: the page's policy forbids inline handlers.
 */
export const TIMELINE_SCRIPT = `
(function(){
  var root=document.documentElement,main=document.querySelector("main");
  var tip=document.getElementById("tip");
  var bars=document.querySelectorAll(".bar");
  // The bars' details and the turns' zoomed views are parsed when first needed, not on load.
  var tips=null,views=null,rows=null,turnView=null,callsView=null,tipBar=null;
  // order: the bars shown while zoomed, in page order (null: every bar).
  var current=0,zoomed=-1,saved=[],savedTicks=null,savedGrid="",order=null;
  var ticks=document.querySelector(".axis .ticks"),zoombar=document.getElementById("zoombar");
  var zoomtitle=document.getElementById("zoomtitle"),zoomstatus=document.getElementById("zoomstatus");
  var unzoomButton=document.getElementById("unzoom");
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
    tipBar=bar;
    placeTip();
  }
  // The details right under their bar, or right above it when there is no room below.
  function placeTip(){
    if(tip.hidden||tipBar===null)return;
    var box=tipBar.getBoundingClientRect();
    var width=tip.offsetWidth,height=tip.offsetHeight;
    var left=Math.min(Math.max(4,box.left),window.innerWidth-width-4);
    var top=box.bottom+6;
    if(top+height>window.innerHeight-4)top=Math.max(4,box.top-height-6);
    tip.style.left=left+"px";tip.style.top=top+"px";
  }
  // The page scrolls (or rows laid out late move it): the details follow their bar.
  var placing=false;
  window.addEventListener("scroll",function(){
    if(placing||tip.hidden)return;
    placing=true;
    requestAnimationFrame(function(){placing=false;placeTip();});
  },{passive:true});
  function hide(){tip.hidden=true;}
  function barOf(target){return target&&target.closest?target.closest(".bar"):null;}
  // Moves the focus to bar "to": scrolled into view first, then its details placed beside it.
  function move(to){
    if(bars.length===0)return;
    to=Math.max(0,Math.min(bars.length-1,to));
    bars[current].removeAttribute("tabindex");
    current=to;
    var bar=bars[current];
    bar.tabIndex=0;
    bar.scrollIntoView({block:"nearest",inline:"nearest"});
    // Focusing shows the details (focusin); a bar focused already has them shown again.
    if(document.activeElement===bar)show(bar);else bar.focus({preventScroll:true});
    // Rows laid out on the way (chunks coming into view, a zoom) can move the bar: place the
    // details again once the page has been laid out.
    requestAnimationFrame(function(){if(document.activeElement===bar&&tipBar===bar){bar.scrollIntoView({block:"nearest",inline:"nearest"});placeTip();}});
  }
  // By "step" bars among those shown; to the first (-Infinity) or last (Infinity) one.
  function moveBy(step){
    if(order===null){move(step===-Infinity?0:step===Infinity?bars.length-1:current+step);return;}
    var at=order.indexOf(current);
    if(at<0)at=0;
    at=step===-Infinity?0:step===Infinity?order.length-1:Math.max(0,Math.min(order.length-1,at+step));
    move(order[at]);
  }
  function expand(ranges){var out=[];for(var i=0;i<ranges.length;i+=2)for(var k=ranges[i];k<ranges[i+1];k++)out.push(k);return out;}
  // Zoom: the turn's rows alone, its bars placed on the turn's own time (computed with the
  // page), the axis relabelled; the whole trace comes back as it was.
  function place(bar,box){
    saved.push([bar,bar.getAttribute("style")]);
    bar.style.left=box[0]+"%";bar.style.width=box[1]+"%";
    var parts=bar.children;
    if(bar.classList.contains("model")){
      var retries=bar.querySelectorAll(".retry");
      for(var r=0;r<retries.length;r++){saved.push([retries[r],retries[r].getAttribute("style")]);retries[r].style.left=box[2+r]+"%";}
      return;
    }
    for(var i=0;i<parts.length;i++){
      var part=parts[i],kind=part.classList;
      if(!kind.contains("seg"))continue;
      saved.push([part,part.getAttribute("style")]);
      if(kind.contains("wait")){part.style.width=(bar.querySelector(".seg.run")?box[2]:100)+"%";}
      else if(kind.contains("run")){part.style.left=box[3]+"%";part.style.width=box[4]+"%";}
      else if(kind.contains("late")){part.style.left=box[5]+"%";part.style.width=box[6]+"%";}
    }
  }
  function axis(list,grid){
    if(savedTicks===null){savedTicks=[].slice.call(ticks.childNodes);savedGrid=main.style.getPropertyValue("--grid");}
    ticks.textContent="";
    for(var i=0;i<list.length;i++){
      var tick=document.createElement("span");tick.className="tick";tick.style.left=list[i][0]+"%";tick.textContent=list[i][1];ticks.appendChild(tick);
    }
    main.style.setProperty("--grid",grid+"%");
  }
  function unzoom(quiet){
    if(zoomed<0)return;
    var active=document.activeElement,inChart=barOf(active)!==null||active===unzoomButton;
    for(var i=saved.length-1;i>=0;i--){if(saved[i][1]===null)saved[i][0].removeAttribute("style");else saved[i][0].setAttribute("style",saved[i][1]);}
    saved=[];
    var marked=main.querySelectorAll(".in-zoom");
    for(var j=0;j<marked.length;j++)marked[j].classList.remove("in-zoom");
    main.classList.remove("zoomed");
    ticks.textContent="";
    for(var k=0;k<savedTicks.length;k++)ticks.appendChild(savedTicks[k]);
    main.style.setProperty("--grid",savedGrid);
    zoomed=-1;order=null;
    zoombar.hidden=true;
    if(!quiet){
      zoomstatus.textContent="Showing the whole trace.";
      if(inChart)move(current);
      else bars[current]&&bars[current].scrollIntoView({block:"center"});
    }
  }
  function zoomTo(index){
    if(views===null)views=JSON.parse(document.getElementById("zoom").textContent||"[]");
    var view=views[index];
    if(!view)return;
    // From a bar (Z), the focus stays on it, in view; from a button, it goes to "Whole trace".
    var wasInChart=barOf(document.activeElement)!==null;
    unzoom(true);
    if(rows===null)rows=main.querySelectorAll(".row");
    var shown=expand(view.rows);
    for(var r=0;r<shown.length;r++){var row=rows[shown[r]];row.classList.add("in-zoom");row.parentNode.classList.add("in-zoom");}
    main.classList.add("zoomed");
    order=expand(view.bars);
    for(var b=0;b<order.length;b++)place(bars[order[b]],view.boxes[b]);
    axis(view.ticks,view.grid);
    zoomed=index;
    zoomtitle.textContent=view.title;
    zoombar.hidden=false;
    zoomstatus.textContent="Zoomed: "+view.title+" Press Z for the whole trace.";
    var to=order.indexOf(current)>=0?current:order[0];
    if(wasInChart)move(to);
    else{bars[current].removeAttribute("tabindex");current=to;bars[current].tabIndex=0;unzoomButton.focus();window.scrollTo(0,0);}
  }
  // The view Z opens from a bar: a call's batch (or its turn, when the turn has no model request), a model request's turn.
  function viewOf(n){
    if(views===null)views=JSON.parse(document.getElementById("zoom").textContent||"[]");
    if(turnView===null){
      turnView=[];callsView=[];
      for(var i=0;i<views.length;i++){
        var list=expand(views[i].bars),into=views[i].kind==="calls"?callsView:turnView;
        for(var k=0;k<list.length;k++)into[list[k]]=i;
      }
    }
    return callsView[n]!==undefined?callsView[n]:turnView[n]!==undefined?turnView[n]:-1;
  }
  document.addEventListener("click",function(event){
    var button=event.target&&event.target.closest?event.target.closest(".zoom"):null;
    if(button){event.preventDefault();zoomTo(Number(button.getAttribute("data-block")));}
  });
  unzoomButton.addEventListener("click",function(){unzoom(false);});
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
  // The label column: the range input (arrow keys by 20 px, PgUp/PgDn by 100), or dragging the
  // grip at its edge. It stays between 160 px and what leaves the chart its 480 px (and the
  // 64 px gutter); below that the page scrolls sideways.
  var width=document.getElementById("label-width"),grip=document.querySelector(".grip"),header=document.querySelector(".axis>.label"),custom=false;
  function widest(){return Math.max(160,document.documentElement.clientWidth-480-64);}
  function column(){return Math.round(header.getBoundingClientRect().width);}
  function sync(){width.max=String(widest());width.value=String(column());}
  function setLabel(px){custom=true;px=Math.max(160,Math.min(widest(),px));root.style.setProperty("--label",px+"px");sync();}
  sync();
  window.addEventListener("resize",function(){if(custom)setLabel(column());else sync();});
  width.addEventListener("input",function(){setLabel(Number(width.value));});
  width.addEventListener("keydown",function(event){
    var step={ArrowRight:20,ArrowUp:20,ArrowLeft:-20,ArrowDown:-20,PageUp:100,PageDown:-100}[event.key];
    if(step===undefined)return;
    event.preventDefault();setLabel(column()+step);
  });
  grip.addEventListener("pointerdown",function(event){
    event.preventDefault();grip.setPointerCapture(event.pointerId);grip.classList.add("dragging");
    var start=event.clientX,from=grip.parentNode.getBoundingClientRect().width;
    function drag(e){setLabel(Math.round(from+e.clientX-start));}
    function drop(){grip.classList.remove("dragging");grip.removeEventListener("pointermove",drag);grip.removeEventListener("pointerup",drop);grip.removeEventListener("pointercancel",drop);}
    grip.addEventListener("pointermove",drag);grip.addEventListener("pointerup",drop);grip.addEventListener("pointercancel",drop);
  });
  var skip=document.getElementById("skip"),back=document.getElementById("back");
  // Tab into and out of the chart is done here: the browser's own search for the next tab
  // stop visits every row, and lays out each off-screen chunk it passes (a second or more on
  // a 10,000-call page). The order is the page's: skip link, the "whole trace" button while
  // zoomed, the chart (one tab stop), back link; from nothing focused, Tab enters the chart
  // and Shift+Tab the back link; from either link outwards the browser goes on as usual.
  function tab(event){
    var active=document.activeElement,inChart=barOf(active)!==null||(active!==null&&active.classList.contains("zoom")),nothing=active===null||active===document.body||active===document.documentElement;
    var zoom=zoomed>=0?unzoomButton:null;
    var to=null;
    if(event.shiftKey){
      if(inChart)to=zoom||skip;
      else if(active===back)to="chart";
      else if(zoom&&active===zoom)to=skip;
      else if(nothing)to=back;
    }else if(inChart)to=back;
    else if(active===skip)to=zoom||"chart";
    else if(zoom&&active===zoom)to="chart";
    else if(nothing)to="chart";
    if(to===null||(to==="chart"&&bars.length===0))return;
    event.preventDefault();
    if(to==="chart")move(current);else to.focus();
  }
  document.addEventListener("keydown",function(event){
    if(event.key==="Escape"){hide();return;}
    if(event.key==="Tab"&&!event.altKey&&!event.ctrlKey&&!event.metaKey){tab(event);return;}
    var onBar=barOf(event.target)!==null;
    if((event.key==="z"||event.key==="Z")&&!event.altKey&&!event.ctrlKey&&!event.metaKey&&(onBar||event.target===unzoomButton||(zoomed>=0&&event.target===document.body))){
      event.preventDefault();
      if(zoomed>=0)unzoom(false);else{var into=viewOf(current);if(into>=0)zoomTo(into);}
      return;
    }
    if(!onBar)return;
    var step={ArrowDown:1,ArrowRight:1,ArrowUp:-1,ArrowLeft:-1,PageDown:20,PageUp:-20}[event.key];
    if(step!==undefined){event.preventDefault();moveBy(step);}
    else if(event.key==="Home"){event.preventDefault();moveBy(-Infinity);}
    else if(event.key==="End"){event.preventDefault();moveBy(Infinity);}
  });
})();
`;

let scriptHash: string | undefined;

/**
 * The Content-Security-Policy source that allows {@link TIMELINE_SCRIPT} and nothing else:
 * `sha256-` and the base64 SHA-256 of the script's text. Computed on first use.
 */
export function timelineScriptHash(): string {
  scriptHash ??= `sha256-${createHash("sha256").update(TIMELINE_SCRIPT, "utf8").digest("base64")}`;
  return scriptHash;
}
