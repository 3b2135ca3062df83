document.addEventListener("keydown", function (event) {
  if (event.target.tagName === "INPUT" && event.target.type === "text") return;
  if (event.key === "Enter") { document.getElementById("rating").requestSubmit(); event.preventDefault(); return; }
  var box = document.querySelector('#rating input[data-key="' + event.key.toLowerCase() + '"]');
  if (box) { box.type === "checkbox" ? (box.checked = !box.checked) : (box.checked = true); event.preventDefault(); }
});
