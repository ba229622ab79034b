Boutput_gradJ0Xƒ°?âÓ!@»LÒ>	î|¿wh¿rÒ
?QÍá=“ÀªP?¡¾|½T?§}¾