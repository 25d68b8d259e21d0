// Starts Swagger UI on GET /docs (an external file, so the page's Content-Security-Policy needs no inline script).
(function () {
  "use strict";
  window.SwaggerUIBundle({
    url: "/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    presets: [window.SwaggerUIBundle.presets.apis, window.SwaggerUIBundle.SwaggerUIStandalonePreset],
    layout: "BaseLayout",
  });
})();
