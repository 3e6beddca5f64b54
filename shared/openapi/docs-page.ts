/** A self-contained, readable rendering of /openapi.json (no CDN: the local stack works offline). */
export const DOCS_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Support Desk API</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:1000px;margin:2rem auto;padding:0 1rem;color:#222}
h1{margin-bottom:.2rem}.op{border:1px solid #ddd;border-radius:6px;margin:.6rem 0;padding:.2rem .8rem}
summary{cursor:pointer;padding:.4rem 0}.m{display:inline-block;width:4.5rem;font-weight:700}
.GET{color:#0a7}.POST{color:#07c}.PUT,.PATCH{color:#c70}.DELETE{color:#c22}
pre{background:#f6f6f6;padding:.6rem;overflow:auto;font-size:13px}code{font-size:13px}
</style></head><body><h1>Support Desk API</h1><p id="desc"></p><div id="ops">Loading…</div>
<script>
fetch('/openapi.json').then(r=>r.json()).then(doc=>{
  document.getElementById('desc').textContent=doc.info.description;
  const ops=document.getElementById('ops');ops.textContent='';
  for(const [path,methods] of Object.entries(doc.paths)) for(const [m,op] of Object.entries(methods)){
    const d=document.createElement('details');d.className='op';
    const s=document.createElement('summary');
    s.innerHTML='<span class="m '+m.toUpperCase()+'">'+m.toUpperCase()+'</span><code></code> — ';
    s.querySelector('code').textContent=path;s.append(op.summary||'');d.append(s);
    const pre=document.createElement('pre');
    pre.textContent=JSON.stringify({description:op.description,parameters:op.parameters,requestBody:op.requestBody,responses:op.responses},null,2);
    d.append(pre);ops.append(d);
  }
  const c=document.createElement('details');c.className='op';c.innerHTML='<summary><b>Schemas</b></summary>';
  const pre=document.createElement('pre');pre.textContent=JSON.stringify(doc.components.schemas,null,2);c.append(pre);ops.append(c);
});
</script></body></html>`;
